"""Which terms the prediction model has: the build-up of ``rules_addendum_2026-12-02b``.

The smallest model the exact counts allow (:data:`M0`) prices the replay's shared-line
transfers with exact MVA, one hold time per machine family (a pooled scale and the
family's deviation, the deviations' spread fitted), the work outside memcg and the
charge path's own instructions, all of an operation's CPU time on one CPU. Each further
term is a switch of :class:`Terms`, added in :data:`ORDER` and kept only if it lowered
the leave-one-source-out score (``docs/prediction.md``, the ablation table), and the
per-family deviations were then tried off on the chosen model (addendum 2026-12-03b);
:data:`DEFAULT_TERMS` is the model that chose, and what ``memcglab predict`` uses.

>>> M0.key()
'error=student,family_deviation'
>>> FULL.with_term("private_lines", False).private_lines
False
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["DEFAULT_TERMS", "ERROR_MODELS", "FULL", "M0", "ORDER", "Terms"]

#: the error models of the addendum, section 1 (:mod:`memcglab.scenario.errors`)
ERROR_MODELS: tuple[str, ...] = ("scaled", "lognormal", "lognormal+additive", "student")


@dataclass(frozen=True)
class Terms:
    """The model's switches; every field but ``error`` is one candidate term."""

    error: str = "student"
    #: the CPU's SMT pairing and time-sharing slowdown (memcglab.queueing.cpu_slowdown)
    cpu_slowdown: bool = False
    #: the busiest CPU's share of an operation's cycles, drawn (else all on one CPU)
    busiest_share: bool = False
    #: the hold time's growth with sockets beyond the cross-socket share
    socket_growth: bool = False
    #: transfers of lines only one instance writes, priced as a delay
    private_lines: bool = False
    #: every priced modelling-alternative combination, as a mixture (else the mode's)
    alternatives: bool = False
    #: the training sources' printed perf shares in the calibration's likelihood
    perf_shares: bool = False
    #: one hold time per machine family (else one pooled hold time for all)
    family_deviation: bool = True
    #: the page_counter layout field by field (memcglab.pricing.layout): a walk level that
    #: touches usage's line again after its update re-fetches it when another CPU took it
    page_counter_fields: bool = False
    #: with page_counter_fields, the adjacent-line prefetch alternative: the unit of
    #: sharing is the 128-byte pair of lines
    prefetch_pair: bool = False

    def __post_init__(self) -> None:
        if self.error not in ERROR_MODELS:
            raise ValueError(f"Terms error={self.error!r}: valid: {', '.join(ERROR_MODELS)}")
        if self.prefetch_pair and not self.page_counter_fields:
            raise ValueError("Terms prefetch_pair is an alternative of page_counter_fields, "
                             "which is off")

    def with_term(self, name: str, on: bool) -> Terms:
        """This model with term ``name`` switched on or off."""
        if name not in {f.name for f in fields(self)} - {"error"}:
            raise ValueError(f"term {name!r}: valid: {', '.join(ORDER)}, family_deviation, "
                             "page_counter_fields, prefetch_pair")
        return replace(self, **{name: on})

    def key(self) -> str:
        """A short stable text of the switches (cache keys, tables)."""
        on = [f.name for f in fields(self) if f.name != "error" and getattr(self, f.name)]
        return ",".join([f"error={self.error}", *on])


#: the candidate terms in the order the addendum tries them
ORDER: tuple[str, ...] = ("cpu_slowdown", "busiest_share", "socket_growth", "private_lines",
                          "alternatives", "perf_shares")
#: the smallest model (the addendum's M0) with the error model section 1 chose: student,
#: the highest leave-one-source-out log score on the full model (data/validation/history/
#: 2026-12-02_ablation/)
M0 = Terms()
#: every term on
FULL = replace(M0, **dict.fromkeys(ORDER, True))
#: the model the build-up chose (docs/prediction.md, the ablation table): the CPU
#: slowdown, the busiest-CPU share and socket growth lowered the selection score;
#: private lines, the alternatives' mixture (at prior or stacked weights) and the perf
#: shares did not; nor did the per-family hold-time deviations
#: (rules_addendum_2026-12-03b: 0.888 without them against 0.940), so one pooled hold
#: time prices every machine family. The layout term, field by field with the
#: adjacent-line prefetch pair, then lowered it on the grown set
#: (``rules_addendum_2026-12-04_layout_term.md``: 0.750 against 1.346 for the fields
#: alone and 1.751 without; ``data/validation/history/2026-12-04_layout/``)
DEFAULT_TERMS = replace(M0, cpu_slowdown=True, busiest_share=True, socket_growth=True,
                        family_deviation=False, page_counter_fields=True, prefetch_pair=True)
