"""benchbpf's version, at the bottom so that what records it (fingerprint,
the runner's metadata) need not import the package that imports them."""
__version__ = "0.1.0"
