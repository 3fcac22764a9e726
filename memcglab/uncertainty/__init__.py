"""Uncertainty: priors of model inputs, propagated jointly with seeds and modelling choices.

* :mod:`~memcglab.uncertainty.priors`: the :class:`Prior` vocabulary;
* :mod:`~memcglab.uncertainty.space`: the one :class:`Space` of uncertain inputs (priors,
  Params, a calibration's :class:`Block`, :class:`Alternative` modelling choices,
  model-error variates (:class:`Variate`) and seeds), sampled quasi-randomly into
  :class:`Draws`; the studies and ``memcglab predict`` both draw through it;
* :mod:`~memcglab.uncertainty.pricing`: :class:`CoefficientTable`, cycles for thousands
  of parameter points from event counts taken once per trace;
* :mod:`~memcglab.uncertainty.sensitivity`: Sobol indices, tornado swings, break-even;
* :mod:`~memcglab.uncertainty.propagate`: :func:`summarise` -> :class:`UncertainResult`;
* :mod:`~memcglab.uncertainty.plots`: the tornado chart and Sobol bars with a caption.
"""

from memcglab.uncertainty.plots import sensitivity_figure
from memcglab.uncertainty.pricing import CoefficientTable, price
from memcglab.uncertainty.priors import SHAPES, Prior
from memcglab.uncertainty.propagate import UncertainResult, format_break_even, summarise
from memcglab.uncertainty.sensitivity import QuantityFn, at_fixed, break_even, sobol, tornado
from memcglab.uncertainty.space import (
    SEED,
    SOURCES,
    Alternative,
    Block,
    Draws,
    Input,
    Space,
    Variate,
)

__all__ = [
    "SHAPES", "Prior",
    "SEED", "SOURCES", "Alternative", "Block", "Draws", "Input", "Space", "Variate",
    "CoefficientTable", "price",
    "QuantityFn", "at_fixed", "break_even", "sobol", "tornado",
    "UncertainResult", "format_break_even", "summarise",
    "sensitivity_figure",
]
