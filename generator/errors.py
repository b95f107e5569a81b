"""The one kind of failure a person is meant to read: a single line, no traceback."""


class UserError(Exception):
    """A problem in something a person wrote (a data file, a page, a template), already phrased as one line."""
