"""Rendering: turns the frozen facts into what a reader sees.

`views` shapes the facts for templates, `figure_registry` says which figures exist and which facts each is drawn
from, `figures` draws them, `palette` holds their colours (light and dark), `pages` turns Markdown + Jinja into
HTML, `card` draws the social card and `whatif` writes the what-if editor's starting data and its JavaScript
parity vectors. Rendering reads the model; it never computes a number the facts hold.
"""
