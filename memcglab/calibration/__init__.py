"""Calibrated inputs: posteriors fitted on the development set, and their pinned files.

:mod:`memcglab.calibration.posterior` holds the posterior object; a calibration file
(``data/calibration/``) stores one, with the SHA-256 of the development set it was
fitted on. Like ``data/hardware/``, this is an input a simulation may read: it holds
fitted parameters, never the measurements behind them.
"""

from memcglab.calibration.posterior import Calibration, Param

__all__ = ["Calibration", "Param"]
