"""The site build: `pipeline` runs the stages in order (inputs -> facts -> figures -> pages -> files), `cache`
keeps the results that are slow to compute, `output` writes the finished folder atomically, `publish` adds what a
build knows about itself (address, date, commit, sitemap) and `report` turns a failure into one line.
"""
