from stepend_pkg.models.linear import LinearClassifier
from stepend_pkg.models.mlp import MLPClassifier

__all__ = ["LinearClassifier", "MLPClassifier"]
