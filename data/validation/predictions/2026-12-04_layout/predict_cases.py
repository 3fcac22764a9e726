"""The layout addendum's predictions (rules_addendum_2026-12-04_layout_term.md), written
before any score: every case the term can move, under variants A, B and C, with the
default calibration of the day and the contract's default points and seed.

    python data/validation/predictions/2026-12-04_layout/predict_cases.py CASE_ID...

writes ``<case>.<variant>.json`` beside this file (``/`` in a case ID becomes ``__``).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from memcglab.calibration.files import load_calibration
from memcglab.resources import data_dir
from memcglab.scenario.model import ScenarioModel
from memcglab.scenario.predict import predict_scenario
from memcglab.scenario.spec import load_scenario
from memcglab.scenario.terms import DEFAULT_TERMS

VARIANTS = {
    "A": DEFAULT_TERMS,
    "B": dataclasses.replace(DEFAULT_TERMS, page_counter_fields=True),
    "C": dataclasses.replace(DEFAULT_TERMS, page_counter_fields=True, prefetch_pair=True),
}


def main(cases: list[str]) -> None:
    here = Path(__file__).parent
    cal, label = load_calibration("default")
    for case in cases:
        scenario = load_scenario(data_dir() / "validation" / "scenarios" / f"{case}.toml")
        for name, terms in VARIANTS.items():
            model = ScenarioModel(scenario, seed=0, terms=terms)
            out = predict_scenario(scenario, calibration=cal, label=label, model=model)
            out["variant"] = {"name": name, "terms": terms.key()}
            path = here / f"{case.replace('/', '__')}.{name}.json"
            path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
            print(f"{case} {name}: change {out['change_pct']}")


if __name__ == "__main__":
    main(sys.argv[1:])
