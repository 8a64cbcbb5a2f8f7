"""Every platform answers bad input with its own error answer: never a 500, never a traceback."""

from __future__ import annotations

import pytest

from sandbox.probes import PROBES, read_outcome

# Values that have broken emulators before: non-numbers in paging fields, huge and negative
# numbers, SQL and markup fragments, very long strings, control characters and Hangul.
NASTY = ["abc", "-1", "0", "99999999999999999999", "1e3", "' OR 1=1 --", "<x>", "%00", "가" * 2000, "\x7f", ""]
PAGING = ("pIndex", "pSize", "pageNo", "numOfRows", "page_no", "page_count", "display", "page")


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.platform)
def test_the_probe_request_succeeds(http, keys, probe):
    response = http.get(probe.path(keys), params=probe.params(keys))
    outcome = read_outcome(probe, response)
    assert response.status_code == 200 and outcome.ok and outcome.records > 0, (outcome, response.text[:300])


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.platform)
def test_nasty_parameter_values_never_cause_a_server_error(client, keys, probe):
    base = probe.params(keys)
    names = [n for n in base if n.lower() not in ("key", "crtfc_key", "servicekey", "oc")] + list(PAGING)
    for name in names:
        for value in NASTY:
            response = client.get(probe.path(keys), params={**base, name: value})
            assert response.status_code < 500 or response.status_code == 503, (name, value, response.text[:200])
            assert "Traceback" not in response.text and "Exception" not in response.text[:200], (name, value)


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.platform)
def test_a_wrong_key_is_rejected(client, keys, probe):
    wrong = probe.params(keys)
    path = probe.path(keys)
    if probe.platform == "seoul":
        path = path.replace(keys.first("seoul"), "0" * 30)
    else:
        for name in wrong:
            if name.lower() in ("key", "crtfc_key", "servicekey", "oc"):
                wrong[name] = "not-a-configured-key"
    response = client.get(path, params=wrong)
    assert not read_outcome(probe, response).ok, response.text[:300]
