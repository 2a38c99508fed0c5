"""Isomorphism measures between two embedding spaces: eigenvector similarity (EV),
Gromov–Hausdorff via persistent homology (GH) and Gromov–Wasserstein (GW)."""
