"""A plugin whose import fails, as one with a missing shared library would."""

raise ImportError("libtoy.so: cannot open shared object file")
