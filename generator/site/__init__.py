"""The site build: `pipeline` runs the stages in order (inputs -> facts -> playground -> figures -> pages ->
files), `assemble` turns their results into the site's files and pages, `cache` keeps the results that are slow
to compute (and trusts nothing it reads back), `output` swaps the finished folder in atomically, `publish` adds
what a build knows about itself (address, date, commit, sitemap, the strict link check) and `report` turns a
failure into one line.
"""
