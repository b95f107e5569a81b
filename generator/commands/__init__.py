"""The command line's verbs, one module each: `add_arguments(parser)` and `run(args)`.

__main__ imports only the chosen one.
"""
