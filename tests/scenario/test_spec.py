"""The scenario file format: every key, every default, every error (the scenario contract)."""

from __future__ import annotations

import pytest

from memcglab.scenario.keys import DESIGN_KEYS, WORKLOAD_TESTS, workload_keys
from memcglab.scenario.spec import ScenarioError, load_scenario, parse_scenario

BASE = """schema = 1
name = "a scenario"
[machine]
profile = "lkp-2s-224t-spr"
[workload]
family = "netperf"
test = "SCTP_RR"
instances = 448
[base]
model = "multi"
[new]
model = "pcstock-v4"
"""


def write(tmp_path, text, name="s.toml"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_defaults_are_the_contracts(tmp_path):
    s = load_scenario(write(tmp_path, BASE))
    assert s.name == "a scenario" and s.machine.profile == "lkp-2s-224t-spr"
    assert (s.cgroups.layout, s.cgroups.depth, s.cgroups.protection) == ("lkp", 2, False)
    assert s.workload.keys == {"instances": 448, "ip": "ipv4", "rr_size": 1}
    for d in (s.base, s.new):
        assert (d.batch, d.slots, d.refill, d.sk_reclaim) == (64, 7, "always", "eager")
    assert s.base.model == "multi" and s.new.model == "pcstock-v4"


@pytest.mark.parametrize(("layout", "depth"), [("lkp", 2), ("per-instance", 2), ("shared", 1)])
def test_layout_default_depths(tmp_path, layout, depth):
    s = load_scenario(write(tmp_path, BASE + f'[cgroups]\nlayout = "{layout}"\n'))
    assert s.cgroups.depth == depth


def test_family_and_test_defaults():
    assert workload_keys("netperf", "TCP_STREAM")["send_size"].default == 16384
    assert workload_keys("lmbench", "bw_unix")["message_bytes"].default == 65536
    assert workload_keys("lmbench", "bw_tcp")["message_bytes"].default == 65536
    hb = workload_keys("hackbench", "pipe")
    assert (hb["mode"].default, hb["fds"].default, hb["datasize"].default,
            hb["loops"].default, hb["groups"].required) == ("process", 20, 100, 100, True)
    md = workload_keys("madvise", "fault_release")
    assert md["cgroups"].required and md["iterations"].default == 50
    assert set(WORKLOAD_TESTS["netperf"]) == {"TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS",
                                              "TCP_RR", "UDP_RR", "SCTP_RR",
                                              "SCTP_STREAM_MANY"}
    assert DESIGN_KEYS["batch"].high == 524287 and DESIGN_KEYS["slots"].high == 255


def test_inline_machine(tmp_path):
    text = BASE.replace('profile = "lkp-2s-224t-spr"',
                        'cpus = 144\nsockets = 4\nthreads_per_core = 2\nfamily = "cooper-lake"')
    s = load_scenario(write(tmp_path, text))
    assert (s.machine.cpus, s.machine.sockets, s.machine.family, s.machine.ghz) == \
        (144, 4, "cooper-lake", None)


BAD = [
    ("schema", BASE.replace("schema = 1", "schema = 2"), "schema: 2 is unsupported"),
    ("schema missing", BASE.replace("schema = 1\n", ""), "schema: missing"),
    ("name", BASE.replace('name = "a scenario"', 'name = ""'), "name: '' is not"),
    ("unknown top", BASE + "[extra]\nx = 1\n", "extra: unknown key"),
    ("profile and facts", BASE.replace('profile = "lkp-2s-224t-spr"',
                                       'profile = "lkp-2s-224t-spr"\ncpus = 4'),
     "machine.cpus: given with a profile"),
    ("inline missing", BASE.replace('profile = "lkp-2s-224t-spr"', "cpus = 4"),
     "machine.sockets: missing"),
    ("family", BASE.replace('profile = "lkp-2s-224t-spr"',
                            'cpus = 4\nsockets = 1\nthreads_per_core = 2\nfamily = "pentium"'),
     "machine.family: 'pentium' is unknown (valid: sapphire-rapids"),
    ("cpus range", BASE.replace('profile = "lkp-2s-224t-spr"',
                                'cpus = 0\nsockets = 1\nthreads_per_core = 2\nfamily = "zen4"'),
     "machine.cpus: 0 is out of range"),
    ("cpus split", BASE.replace('profile = "lkp-2s-224t-spr"',
                                'cpus = 6\nsockets = 4\nthreads_per_core = 2\nfamily = "zen4"'),
     "machine.cpus: 6 is not a multiple"),
    ("layout", BASE + '[cgroups]\nlayout = "flat"\n', "cgroups.layout: 'flat' is unknown"),
    ("depth", BASE + "[cgroups]\ndepth = 0\n", "cgroups.depth: 0 is out of range"),
    ("per-instance depth", BASE + '[cgroups]\nlayout = "per-instance"\ndepth = 1\n',
     "cgroups.depth: 1 leaves no shared parent"),
    ("protection", BASE + '[cgroups]\nprotection = "yes"\n', "cgroups.protection: 'yes'"),
    ("cgroups key", BASE + "[cgroups]\nlevels = 3\n", "cgroups.levels: unknown key"),
    ("workload family", BASE.replace('family = "netperf"', 'family = "iperf"'),
     "workload.family: 'iperf' is unknown"),
    ("workload test", BASE.replace('"SCTP_RR"', '"SCTP_STREAM"'),
     "workload.test: 'SCTP_STREAM' is not a netperf test"),
    ("instances missing", BASE.replace("instances = 448\n", ""),
     "workload.instances: missing (required by netperf SCTP_RR)"),
    ("instances type", BASE.replace("instances = 448", "instances = 4.5"),
     "workload.instances: 4.5 is not an integer"),
    ("instances bound", BASE.replace("instances = 448", "instances = 100000"),
     "workload.instances: 100000 is out of range (valid: an integer from 1 to 16384)"),
    ("rr key on a stream", BASE.replace('"SCTP_RR"', '"TCP_STREAM"') + "",
     None),
    ("send_size on rr", BASE.replace("instances = 448", "instances = 448\nsend_size = 64"),
     "workload.send_size: unknown key"),
    ("ip", BASE.replace("instances = 448", 'instances = 448\nip = "ipv5"'),
     "workload.ip: 'ipv5' is unknown (valid: ipv4, ipv6)"),
    ("model missing", BASE.replace('[base]\nmodel = "multi"', "[base]"),
     "base.model: missing"),
    ("model", BASE.replace('model = "multi"', 'model = "multi-fix2"'),
     "base.model: 'multi-fix2' is unknown"),
    ("batch", BASE.replace('model = "pcstock-v4"', 'model = "pcstock-v4"\nbatch = 0'),
     "new.batch: 0 is out of range"),
    ("batch multi", BASE.replace('model = "multi"', 'model = "multi"\nbatch = 128'),
     "base.batch: 128 is too large for 'multi'"),
    ("slots", BASE.replace('model = "multi"', 'model = "multi"\nslots = 256'),
     "base.slots: 256 is out of range"),
    ("refill", BASE.replace('model = "multi"', 'model = "multi"\nrefill = "sometimes"'),
     "base.refill: 'sometimes' is unknown (valid: always, not-in-irq, never)"),
    ("sk_reclaim", BASE.replace('model = "multi"', 'model = "multi"\nsk_reclaim = "lazier"'),
     "base.sk_reclaim: 'lazier' is unknown (valid: eager, lazy)"),
    ("design key", BASE.replace('model = "multi"', 'model = "multi"\npolicy = "lru"'),
     "base.policy: unknown key"),
    ("toml", "schema = = 1", "file: is not valid TOML"),
]


@pytest.mark.parametrize(("label", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_files_name_the_key(tmp_path, label, text, message):
    f = write(tmp_path, text)
    if message is None:  # a stream test takes send_size: the file is valid
        load_scenario(f)
        return
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    text_ = str(e.value)
    assert text_.startswith(f"{f}: ") and message in text_, text_
    assert "(valid: " in text_ and "\n" not in text_


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="file: does not exist"):
        load_scenario(tmp_path / "none.toml")


def test_parse_is_pure():
    import tomllib

    a = parse_scenario(tomllib.loads(BASE), "x.toml")
    b = parse_scenario(tomllib.loads(BASE), "x.toml")
    assert a == b and hash(a.workload) == hash(b.workload)


def test_a_relative_profile_path_is_read_beside_the_scenario(tmp_path, monkeypatch):
    # `memcglab probe --out my.toml`, then `profile = "my.toml"` in a scenario kept in the
    # same folder: predict run from another directory must still find the profile
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "my.toml").write_text("# a probed profile\n")
    path = write(folder, BASE.replace('profile = "lkp-2s-224t-spr"', 'profile = "my.toml"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert load_scenario(path).machine.profile == str(folder / "my.toml")
    # a path that exists only from the current directory keeps its old meaning
    (elsewhere / "here.toml").write_text("# another profile\n")
    path = write(folder, BASE.replace('profile = "lkp-2s-224t-spr"', 'profile = "here.toml"'),
                 name="t.toml")
    assert load_scenario(path).machine.profile == "here.toml"
