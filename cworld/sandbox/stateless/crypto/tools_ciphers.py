"""Classical ciphers and check digits of the crypto server (a mixin): ROT13, Caesar, Vigenère, Morse, Luhn.

These are puzzles and data-entry checks, not security: the descriptions say so.
"""

from __future__ import annotations

import codecs
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.crypto.ciphers import MORSE, luhn_sum, morse_decode, shift_letter
from cworld.sandbox.stateless.crypto.models import CardNumber, CipherText, Decode, LuhnCheck, MorseText
from cworld.sandbox.stateless.shared import TextResult, invalid


class CipherTools:
    @tool(read_only=True)
    def rot13(self, text: CipherText) -> TextResult:
        """ROT13: rotate each Latin letter 13 places (its own inverse; hides spoilers, not secrets)."""
        return TextResult(text=codecs.encode(text, "rot_13"))

    @tool(read_only=True)
    def caesar_cipher(
        self,
        text: CipherText,
        shift: Annotated[
            int,
            Field(description="Places to rotate each letter, -25..25 (3 is Caesar's own).", ge=-25, le=25),
        ],
        decode: Decode = False,
    ) -> TextResult:
        """Caesar cipher: rotate Latin letters by a fixed shift, keeping case; other characters unchanged."""
        step = -shift if decode else shift
        return TextResult(text="".join(shift_letter(c, step) for c in text))

    @tool(read_only=True)
    def vigenere_cipher(
        self,
        text: CipherText,
        key: Annotated[
            str,
            Field(
                description="The keyword; only its letters count (case-insensitive).",
                min_length=1,
                max_length=100,
            ),
        ],
        decode: Decode = False,
    ) -> TextResult:
        """Vigenère cipher: shift each letter by the matching key letter (A=0 ... Z=25); the key advances
        only on letters, and other characters pass through."""
        shifts = [ord(c) - 97 for c in key.lower() if "a" <= c <= "z"]
        if not shifts:
            raise invalid("the key has no letters A-Z; pass a keyword such as 'LEMON'")
        out, i = [], 0
        for c in text:
            if c.isascii() and c.isalpha():
                out.append(shift_letter(c, -shifts[i % len(shifts)] if decode else shifts[i % len(shifts)]))
                i += 1
            else:
                out.append(c)
        return TextResult(text="".join(out))

    @tool(read_only=True)
    def morse_code(self, text: MorseText, decode: Decode = False) -> TextResult:
        """International Morse code: encode letters, digits and common punctuation, or decode dots and
        dashes back to (uppercase) text."""
        if decode:
            return TextResult(text=morse_decode(text))
        words = []
        for word in text.upper().split():
            unknown = sorted({c for c in word if c not in MORSE})
            if unknown:
                raise invalid(
                    f"no Morse code for {unknown}; use letters, digits and the punctuation "
                    f"{''.join(sorted(c for c in MORSE if not c.isalnum()))}"
                )
            words.append(" ".join(MORSE[c] for c in word))
        return TextResult(text=" / ".join(words))

    @tool(read_only=True)
    def luhn_check(self, number: CardNumber) -> LuhnCheck:
        """Validate a number with the Luhn (mod 10) checksum used by payment cards, and give the check digit
        it would need."""
        digits = number.replace(" ", "").replace("-", "")
        if not digits or not digits.isdigit() or not digits.isascii():
            raise invalid("the number must contain only digits (spaces and dashes allowed)")
        valid = luhn_sum(digits) % 10 == 0
        check = (10 - luhn_sum(digits + "0") % 10) % 10
        return LuhnCheck(valid=valid, check_digit=check)
