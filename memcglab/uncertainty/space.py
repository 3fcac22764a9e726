"""The space of uncertain inputs: priors, calibrated blocks, alternatives, variates, seeds.

A :class:`Space` lists everything a priced quantity depends on that the lab does not
know exactly, and is the package's one map from points of the unit cube to input
values; the studies and ``memcglab predict`` both draw through it. Its inputs:

* hardware costs and other priors (:class:`~memcglab.uncertainty.priors.Prior`),
  through :meth:`Prior.ppf`;
* unknowns with a normal prior in a transformed scale
  (:class:`~memcglab.calibration.posterior.Param`: log for a positive one), through the
  normal quantile in that scale;
* a :class:`Block` of inputs drawn jointly (a calibration's posterior,
  :meth:`memcglab.calibration.Calibration.from_unit`), one coordinate per input;
* modelling choices (:class:`Alternative`: ``cpus_per_flow`` in {1, 2, 4}, where a
  release is placed), through the quantile of their weights;
* named standard variates (:class:`Variate`: a model error's normal or Student-t);
* the trace seeds.

Every input owns one coordinate of the unit cube, in the order given;
:meth:`Space.draws` maps points of the cube to input values without loops, so
quasi-random points (:meth:`Space.sample`, ``scipy.stats.qmc``) and the points
``scipy.stats.sobol_indices`` asks for go through the same map.

Inputs that cannot vary (a ``point`` prior, an alternative with one option) are held
at that value and own no coordinate, unless the space is built with ``own_fixed``:
then they own one too (and ignore it), so a design's columns do not depend on which
inputs happen to be fixed (predict's design, whose registered results depend on its
columns, is built so).

>>> from memcglab.uncertainty.priors import Prior
>>> s = Space([Prior("a", "cycles", 0.0, 1.0, 2.0, "uniform", "example")],
...           {"cpus_per_flow": [1, 2, 4]}, seeds=[0, 1])
>>> s.varying
('a', 'cpus_per_flow', 'seed')
>>> d = s.draws(np.array([[0.5, 0.9, 0.1]]))
>>> float(d["a"][0]), int(d["cpus_per_flow"][0]), int(d["seed"][0])
(1.0, 4, 0)
>>> sorted(s.sources)
['alternatives', 'parameters', 'seeds']
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm, qmc
from scipy.stats import t as t_dist

from memcglab.calibration.posterior import Param
from memcglab.uncertainty.priors import Prior

__all__ = ["SEED", "SOURCES", "Alternative", "Block", "Draws", "Input", "Space", "Variate"]

#: the name of the seed factor
SEED = "seed"
#: the sources of uncertainty an interval can include
SOURCES: tuple[str, ...] = ("parameters", "alternatives", "seeds")
#: how far from 0 and 1 a coordinate is clipped before a normal or t quantile (finite)
_EPS = 1e-12


def _clipped(u: np.ndarray) -> np.ndarray:
    return np.clip(u, _EPS, 1 - _EPS)


@dataclass(frozen=True)
class Alternative:
    """A discrete modelling choice: its options, their weights, and the declared default.

    Options are drawn with probabilities ``weights`` (equal when omitted); ``default``
    (the first option when omitted) is the value used when the input is held fixed.

    >>> Alternative("placement", ("same", "softirq", "reader")).pick(np.array([0.0, 0.5, 0.99]))
    array([0, 1, 2])
    """

    name: str
    options: tuple[Hashable, ...]
    weights: tuple[float, ...] | None = None
    default: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        if not self.options:
            raise ValueError(f"alternative {self.name}: options is empty; list at least one")
        if len(set(self.options)) != len(self.options):
            raise ValueError(f"alternative {self.name}: options={self.options}: "
                             "must be distinct")
        if self.weights is not None:
            w = tuple(float(x) for x in self.weights)
            if len(w) != len(self.options) or any(not np.isfinite(x) or x < 0 for x in w) \
                    or sum(w) <= 0:
                raise ValueError(f"alternative {self.name}: weights={self.weights}: need one "
                                 f"finite weight >= 0 per option ({len(self.options)}), "
                                 "not all zero")
            object.__setattr__(self, "weights", w)
        if self.default is None:
            object.__setattr__(self, "default", self.options[0])
        elif self.default not in self.options:
            raise ValueError(f"alternative {self.name}: default={self.default!r}: must be one "
                             f"of {list(self.options)}")

    @property
    def probabilities(self) -> np.ndarray:
        """The probability of each option (weights normalised)."""
        w = np.ones(len(self.options)) if self.weights is None else np.array(self.weights)
        return w / w.sum()

    @property
    def default_index(self) -> int:
        """Index of the default option."""
        return self.options.index(self.default)

    def pick(self, u: np.ndarray) -> np.ndarray:
        """Option indices at quantiles ``u`` of a uniform coordinate (vectorised)."""
        edges = np.cumsum(self.probabilities)[:-1]
        return np.searchsorted(edges, np.asarray(u, dtype=float), side="right")


@dataclass(frozen=True)
class Block:
    """Inputs drawn jointly: one coordinate per name, mapped together by ``from_unit``.

    ``from_unit`` takes an ``(n, len(names))`` block of the unit cube and returns a value
    array per name: a calibration's correlated posterior
    (:meth:`memcglab.calibration.Calibration.from_unit`) is one.

    >>> b = Block(("x", "y"), lambda u: {"x": u[:, 0], "y": u[:, 0] + u[:, 1]})
    >>> Space([b]).draws(np.array([[0.25, 0.5]]))["y"].tolist()
    [0.75]
    """

    names: tuple[str, ...]
    from_unit: Callable[[np.ndarray], Mapping[str, np.ndarray]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        if not self.names or len(set(self.names)) != len(self.names):
            raise ValueError(f"block names={self.names}: need at least one name, each once")

    def draw(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """The block's values at its ``(n, len(names))`` unit coordinates."""
        out = dict(self.from_unit(u))
        if set(out) != set(self.names):
            raise ValueError(f"block {self.names}: from_unit returned {sorted(out)}; "
                             "it must return one array per name")
        return out


@dataclass(frozen=True)
class Variate:
    """A named standard variate: a normal, or a Student-t with ``df`` degrees of freedom.

    >>> Variate("z").ppf(np.array([0.5])).tolist(), Variate("t", df=4).ppf(np.array([0.5])).tolist()
    ([0.0], [0.0])
    """

    name: str
    df: float | None = None

    def __post_init__(self) -> None:
        if self.df is not None and not self.df > 0:
            raise ValueError(f"variate {self.name}: df={self.df}: must be > 0 (or None for "
                             "a normal)")

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Values at quantiles ``u`` (clipped off 0 and 1 by 1e-12, so finite)."""
        u = _clipped(np.asarray(u, dtype=float))
        return norm.ppf(u) if self.df is None else t_dist.ppf(u, self.df)


def _param_ppf(p: Param, u: np.ndarray) -> np.ndarray:
    """A Param's values at quantiles ``u``: normal in its unconstrained scale."""
    centre, sd = p.prior_u
    return p.from_u(centre + sd * norm.ppf(_clipped(u)))


#: the kinds of input a space holds
Input = Prior | Param | Block | Variate | Alternative


def _option_array(x: Alternative) -> np.ndarray:
    """The options as an array: floats when every option is a number, else objects."""
    if all(isinstance(o, int | float) and not isinstance(o, bool) for o in x.options):
        return np.asarray(x.options, dtype=float)
    out = np.empty(len(x.options), dtype=object)
    out[:] = x.options
    return out


@dataclass(frozen=True)
class Draws:
    """Input values at ``n`` points: ``draws[name]`` is an array of length ``n``.

    Continuous inputs are float arrays; a discrete input's values are its options
    (``index[name]`` holds the option indices, ``options[name]`` the options).
    """

    values: dict[str, np.ndarray]
    index: dict[str, np.ndarray]
    options: dict[str, tuple[Hashable, ...]]
    n: int

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.values:
            raise KeyError(f"no input named {name!r}; inputs: {', '.join(self.values)}")
        return self.values[name]

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def matrix(self, names: Sequence[str]) -> np.ndarray:
        """Continuous inputs ``names`` as an ``(n, len(names))`` float matrix."""
        return np.column_stack([np.asarray(self[k], dtype=float) for k in names]) \
            if names else np.zeros((self.n, 0))


def _names(x: Input) -> tuple[str, ...]:
    return x.names if isinstance(x, Block) else (x.name,)


@dataclass(frozen=True)
class Space:
    """The inputs of a priced quantity, one coordinate each (see module doc).

    ``inputs`` are any of :data:`Input`, in coordinate order; ``alternatives`` (a list,
    or name -> options) and the ``seeds`` factor come after them.
    """

    inputs: tuple[Input, ...] = ()
    seeds: tuple[Hashable, ...] = ()
    own_fixed: bool = False
    _inputs: dict[str, Input] = field(init=False, repr=False, compare=False)

    def __init__(self, inputs: Sequence[Input] = (),
                 alternatives: Sequence[Alternative] | Mapping[str, Sequence[Any]] = (),
                 seeds: Sequence[Hashable] = (), *, own_fixed: bool = False) -> None:
        if isinstance(alternatives, Mapping):
            alternatives = [Alternative(k, tuple(v)) for k, v in alternatives.items()]
        object.__setattr__(self, "inputs", (*inputs, *alternatives))
        object.__setattr__(self, "seeds", tuple(seeds))
        object.__setattr__(self, "own_fixed", bool(own_fixed))
        named: dict[str, Input] = {}
        items: list[Input] = list(self.inputs)
        if self.seeds:
            items.append(Alternative(SEED, self.seeds))
        for x in items:
            if not isinstance(x, Input):
                raise TypeError(f"space input {x!r}: must be a Prior, Param, Block, Variate "
                                "or Alternative")
            for name in _names(x):
                if name in named:
                    raise ValueError(f"space input name {name!r} appears twice"
                                     + (f"; {SEED!r} is the seed factor" if name == SEED
                                        else ""))
                named[name] = x
        object.__setattr__(self, "_inputs", named)

    @property
    def priors(self) -> tuple[Prior, ...]:
        """The :class:`Prior` inputs, in order."""
        return tuple(x for x in self.inputs if isinstance(x, Prior))

    @property
    def alternatives(self) -> tuple[Alternative, ...]:
        """The :class:`Alternative` inputs (not the seed factor), in order."""
        return tuple(x for x in self.inputs if isinstance(x, Alternative))

    @property
    def names(self) -> tuple[str, ...]:
        """Every input's name, in order (a block's each), then ``seed``."""
        return tuple(self._inputs)

    def __getitem__(self, name: str) -> Input:
        if name not in self._inputs:
            raise KeyError(f"no input named {name!r}; inputs: {', '.join(self._inputs)}")
        return self._inputs[name]

    def _owns(self, x: Input) -> bool:
        if self.own_fixed or not isinstance(x, Prior | Alternative):
            return True
        return x.shape != "point" if isinstance(x, Prior) else len(x.options) > 1

    @property
    def varying(self) -> tuple[str, ...]:
        """The inputs that own a unit-cube coordinate, in column order: those that can
        take more than one value (every input, with ``own_fixed``)."""
        return tuple(k for k, x in self._inputs.items() if self._owns(x))

    @property
    def sources(self) -> frozenset[str]:
        """Which of :data:`SOURCES` vary in this space (what an interval from it includes).

        Priors, Params, blocks and variates (a model's error) are all ``parameters``."""
        out = set()
        for k in self.varying:
            x = self._inputs[k]
            out.add("alternatives" if isinstance(x, Alternative) and k != SEED else
                    "seeds" if k == SEED else "parameters")
        return frozenset(out)

    def draws(self, u: np.ndarray) -> Draws:
        """Input values at unit-cube points ``u``, shape ``(n, len(varying))``."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        var = self.varying
        if u.shape[1] != len(var):
            raise ValueError(f"unit points have {u.shape[1]} columns; the space varies "
                             f"{len(var)} inputs {var}")
        n = u.shape[0]
        col = {k: i for i, k in enumerate(var)}
        values: dict[str, np.ndarray] = {}
        index: dict[str, np.ndarray] = {}
        options: dict[str, tuple[Hashable, ...]] = {}
        for k, x in self._inputs.items():
            if isinstance(x, Block):
                if k == x.names[0]:
                    values.update(x.draw(u[:, [col[m] for m in x.names]]))
            elif isinstance(x, Param):
                values[k] = _param_ppf(x, u[:, col[k]])
            elif isinstance(x, Variate):
                values[k] = x.ppf(u[:, col[k]])
            elif isinstance(x, Prior):
                values[k] = x.ppf(u[:, col[k]]) if k in col else np.full(n, float(x.typical))
            else:
                idx = x.pick(u[:, col[k]]) if k in col else np.zeros(n, dtype=np.intp)
                index[k], options[k] = idx, x.options
                values[k] = _option_array(x)[idx]
        return Draws(values, index, options, n)

    def at(self, fixed: Mapping[str, Any] | None = None, n: int = 1) -> Draws:
        """``n`` copies of the typical point: priors at ``typical``, alternatives at
        their defaults (seeds at the first), Params, blocks and variates at their
        medians, with ``fixed`` (name -> value, or an array of ``n`` values) overriding."""
        fixed = dict(fixed or {})
        unknown = set(fixed) - set(self._inputs)
        if unknown:
            raise KeyError(f"unknown inputs {sorted(unknown)}; inputs: {', '.join(self.names)}")
        d = self.draws(np.full((n, len(self.varying)), 0.5))
        values, index = dict(d.values), dict(d.index)
        for k, x in self._inputs.items():
            if not isinstance(x, Prior | Alternative):
                if k in fixed:
                    values[k] = np.broadcast_to(np.asarray(fixed[k], dtype=float),
                                                (n,)).copy()
                continue
            if isinstance(x, Prior):
                values[k] = np.broadcast_to(np.asarray(fixed.get(k, x.typical), dtype=float),
                                            (n,)).copy()
                continue
            v = fixed.get(k, x.default)
            vals = [v] * n if np.ndim(v) == 0 else list(v)
            bad = [o for o in vals if o not in x.options]
            if bad:
                raise ValueError(f"input {k}={bad[0]!r}: must be one of {list(x.options)}")
            index[k] = np.array([x.options.index(o) for o in vals], dtype=np.intp)
            values[k] = _option_array(x)[index[k]]
        return Draws(values, index, d.options, n)

    def sample(self, n: int, method: str = "sobol", seed: int = 0) -> Draws:
        """``n`` quasi-random points: scrambled Sobol (``n`` a power of 2) or Latin hypercube."""
        d = len(self.varying)
        if method == "sobol":
            if n < 1 or n & (n - 1):
                raise ValueError(f"n={n}: a Sobol sample needs a power of 2 (e.g. 1024); "
                                 "or use method='lhs'")
            u = qmc.Sobol(d, scramble=True, rng=seed).random_base2(int(np.log2(n))) if d \
                else np.zeros((n, 0))
        elif method == "lhs":
            if n < 1:
                raise ValueError(f"n={n}: must be >= 1")
            u = qmc.LatinHypercube(d, rng=seed).random(n) if d else np.zeros((n, 0))
        else:
            raise ValueError(f"method={method!r}: must be 'sobol' or 'lhs'")
        return self.draws(u)
