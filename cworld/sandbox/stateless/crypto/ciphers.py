"""Classical cipher tables and steps: the Morse alphabet, letter shifts, the Luhn sum."""

from __future__ import annotations

import re

from cworld.sandbox.stateless.shared import invalid

MORSE = {
    "A": ".-",
    "B": "-...",
    "C": "-.-.",
    "D": "-..",
    "E": ".",
    "F": "..-.",
    "G": "--.",
    "H": "....",
    "I": "..",
    "J": ".---",
    "K": "-.-",
    "L": ".-..",
    "M": "--",
    "N": "-.",
    "O": "---",
    "P": ".--.",
    "Q": "--.-",
    "R": ".-.",
    "S": "...",
    "T": "-",
    "U": "..-",
    "V": "...-",
    "W": ".--",
    "X": "-..-",
    "Y": "-.--",
    "Z": "--..",
    "0": "-----",
    "1": ".----",
    "2": "..---",
    "3": "...--",
    "4": "....-",
    "5": ".....",
    "6": "-....",
    "7": "--...",
    "8": "---..",
    "9": "----.",
    ".": ".-.-.-",
    ",": "--..--",
    "?": "..--..",
    "'": ".----.",
    "!": "-.-.--",
    "/": "-..-.",
    "(": "-.--.",
    ")": "-.--.-",
    "&": ".-...",
    ":": "---...",
    ";": "-.-.-.",
    "=": "-...-",
    "+": ".-.-.",
    "-": "-....-",
    "_": "..--.-",
    '"': ".-..-.",
    "$": "...-..-",
    "@": ".--.-.",
}


_FROM_MORSE = {v: k for k, v in MORSE.items()}


def shift_letter(c: str, shift: int) -> str:
    if "a" <= c <= "z":
        return chr((ord(c) - 97 + shift) % 26 + 97)
    if "A" <= c <= "Z":
        return chr((ord(c) - 65 + shift) % 26 + 65)
    return c


def luhn_sum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total


def morse_decode(text: str) -> str:
    normalized = text.replace("|", "/")
    words = normalized.split("/") if "/" in normalized else re.split(r"\s{3,}", text)
    out: list[str] = []
    for word in words:
        letters = []
        for code in word.split():
            if code not in _FROM_MORSE:
                raise invalid(
                    f"{code!r} is not a Morse code letter; separate letters by spaces and words by ' / '"
                )
            letters.append(_FROM_MORSE[code])
        out.append("".join(letters))
    return " ".join(w for w in out if w)
