"""Validation: the development set, calibration from data, and the scoreboard.

* :mod:`memcglab.validation.devset` loads the published before/after measurements of
  ``data/validation/`` (with their provenance) and the scenario files beside them;
* :mod:`memcglab.validation.calibrate` fits, jointly over the development set, the few
  inputs no datasheet gives, keeping their uncertainty (a Laplace approximation);
* :mod:`memcglab.validation.scoreboard` predicts every case leave-one-source-out and
  scores the predictions and three baselines (``memcglab validate``);
  :mod:`memcglab.validation.views` and :mod:`memcglab.validation.rows` show it
  (notebook 07);
* :mod:`memcglab.validation.proper` scores every method by the proper rule
  (:mod:`memcglab.validation.scoring`) beside the fair baselines
  (:mod:`memcglab.validation.baselines`); :mod:`memcglab.validation.skill` judges issue 22's
  goals from it, :mod:`memcglab.validation.profiles` compares predicted and printed perf
  shares;
* :mod:`memcglab.validation.ablation` builds the model up term by term,
  :mod:`memcglab.validation.stacking` learns the alternatives' weights,
  :mod:`memcglab.validation.buildup` shows the committed runs (notebook 07,
  ``memcglab validate``);
* :mod:`memcglab.validation.study01` calibrates without the multi-memcg thread's "with"
  column, for study 1's second and third predictions.

This layer and :mod:`memcglab.stats` are the only readers of measured values.
"""
