"""Revised Romanization of Hangul, enough for school names (ENG_SCHUL_NM) and homepage hosts.

NEIS prints an English name next to every school ("Seoul Garam Elementary School"); the
generated names need one too. Syllables are romanized one by one (no sound-change rules),
which is what many real English school names do as well.
"""

from __future__ import annotations

_INITIALS = ("g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h")
_MEDIALS = ("a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we",
            "wi", "yu", "eu", "ui", "i")
_FINALS = ("", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p",
           "t", "t", "ng", "t", "t", "k", "t", "p", "t")


def romanize(text: str) -> str:
    """Romanize Hangul syllables; other characters pass through unchanged."""
    out = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out.append(_INITIALS[code // 588] + _MEDIALS[(code % 588) // 28] + _FINALS[code % 28])
        else:
            out.append(ch)
    return "".join(out)
