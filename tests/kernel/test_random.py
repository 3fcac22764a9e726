"""get_random_u32_below over splitmix64, against independent references."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from memcglab.kernel.random import RandomStream, splitmix64


def test_splitmix64_reference_values():
    # Reference outputs of splitmix64 seeded with 0 (Vigna's public test vector).
    state, outs = 0, []
    for _ in range(3):
        state, out = splitmix64(state)
        outs.append(out)
    assert outs == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_u8_u16_u32_take_the_top_bits_of_one_value_each():
    ref = [splitmix64(0)[1]]
    r = RandomStream(0)
    assert r.get_random_u8() == ref[0] >> 56
    s = RandomStream(0)
    assert s.get_random_u16() == ref[0] >> 48
    t = RandomStream(0)
    assert t.get_random_u32() == ref[0] >> 32
    assert r.draws == s.draws == t.draws == 1


def test_ceil_7_rejects_bytes_whose_low_product_byte_is_below_4():
    # 256 % 7 == 4: a byte b is rejected when (7*b) & 0xff < 4.
    rejected = [b for b in range(256) if (7 * b) & 0xFF < 4]
    assert len(rejected) == 4
    accepted = Counter((7 * b) >> 8 for b in range(256) if (7 * b) & 0xFF >= 4)
    assert set(accepted.values()) == {36}  # exactly uniform over 0..6


@given(st.integers(0, 2**64 - 1), st.sampled_from([1, 2, 3, 7, 16, 255, 256, 257, 1000,
                                                    65536, 65537, 2**24]))
def test_below_matches_a_direct_rejection_sampler(seed, ceil):
    r = RandomStream(seed)
    got = r.get_random_u32_below(ceil)
    # Independent reference: walk the same stream by hand.
    state = seed
    if ceil == 1:
        assert got == 0 and r.draws == 0
        return
    bits = 8 if ceil <= 256 else 16 if ceil <= 65536 else 32
    draws = 0
    while True:
        state, out = splitmix64(state)
        draws += 1
        mult = ceil * (out >> (64 - bits))
        if (mult & ((1 << bits) - 1)) >= (1 << bits) % ceil:
            break
    assert got == mult >> bits
    assert r.draws == draws
    assert 0 <= got < ceil


def test_stream_is_shared_and_deterministic():
    a, b = RandomStream(123), RandomStream(123)
    assert [a.get_random_u32_below(7) for _ in range(50)] == \
           [b.get_random_u32_below(7) for _ in range(50)]
