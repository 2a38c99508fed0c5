"""Small I/O helpers: atomic writes, reading small text files, file fingerprints."""
