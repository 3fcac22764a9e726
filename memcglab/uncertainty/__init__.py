"""Uncertainty: priors of model inputs, propagated jointly with seeds and modelling choices.

See :mod:`memcglab.uncertainty.priors` for the :class:`Prior` vocabulary.
"""

from memcglab.uncertainty.priors import SHAPES, Prior

__all__ = ["SHAPES", "Prior"]
