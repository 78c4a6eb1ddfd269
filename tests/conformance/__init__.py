"""The one contract suite every storage backend must pass unchanged (see ``backends.py``)."""
