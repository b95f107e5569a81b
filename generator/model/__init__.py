"""The model: what the site is about, computed exactly and without I/O beyond reading the inputs.

`readers` reads the authored files strictly (UTF-8, YAML without aliases, JSON), `config` and `profiles` load and
validate `data/site.yaml` and the profiles, `requirements` checks that the profiles show what the pages walk
through, `engine` is the rule itself (one round and its frames; pure), `analysis` derives the exact numbers,
`montecarlo` simulates many rounds at once through the one float copy of the rule, `convergence` checks what
those rounds commit against the exact law, and `facts` freezes every number a page or figure shows. Nothing here
imports from `render` or `site`.
"""
