"""matplotlib, imported for drawing: figures.py (and so every process that draws) imports this first.

As each Artist subclass is created, matplotlib writes the whole list of its properties into the
docstring of its set() method (matplotlib.artist.kwdoc). That is about a quarter of importing
matplotlib, paid again in every process that draws, and no figure ever reads a docstring: the
list is left empty. Nothing drawn depends on it (a build's SVGs are byte-identical either way).
"""
import matplotlib.artist

matplotlib.artist.kwdoc = lambda artist: ""
