"""RAVEL scoring (Cause / Isolate / Disentangle) and the methods that localise an attribute."""
