"""What the browser card's family rules read of a browser's world (`category_cards/browser_automation.yaml`):
the tab in front, the element a call names, and the key names a keyboard knows. Written from what Playwright
and Puppeteer do, not from one server: a ref is the one the latest snapshot showed, a selector one the page
holds, and a key a name `keyboard.press` accepts."""

from __future__ import annotations

import re
from typing import Any

#: Named keys `keyboard.press` accepts (Playwright's and Puppeteer's key names, without the F-keys: `F1`-`F24`
#: are matched by pattern), besides any single character.
KEY_NAMES = frozenset({
    "backquote", "minus", "equal", "backslash", "backspace", "tab", "delete", "escape", "esc", "enter", "return",
    "space", "arrowdown", "arrowleft", "arrowright", "arrowup", "down", "left", "right", "up", "end", "home",
    "insert", "pagedown", "pageup", "shift", "control", "ctrl", "alt", "meta", "command", "cmd", "controlormeta",
    "capslock", "numlock", "scrolllock", "contextmenu", "pause", "printscreen", "semicolon", "quote", "comma",
    "period", "slash", "bracketleft", "bracketright", "numpadenter", "numpadadd", "numpadsubtract",
    "numpadmultiply", "numpaddivide", "numpaddecimal", "altleft", "altright", "shiftleft", "shiftright",
    "controlleft", "controlright", "metaleft", "metaright", "audiovolumeup", "audiovolumedown", "audiovolumemute",
})
_NAMED = re.compile(r"^(f([1-9]|1\d|2[0-4])|key[a-z]|digit\d|numpad\d)$")


def front_tab(tabs: Any) -> Any:
    """The key of the tab in front: the active one opened last (a world may mark several active), else the
    tab opened last; None when no tab is open."""
    if not isinstance(tabs, dict) or not tabs:
        return None
    records = [(k, t) for k, t in tabs.items() if isinstance(t, dict)]
    active = [(k, t) for k, t in records if t.get("active")] or records
    return max(active, key=lambda kt: (str(kt[1].get("opened_at") or ""), str(kt[0])))[0] if active else None


def element_key(elements: Any, given: Any) -> Any:
    """The key of the page's element a call names: by its key or snapshot ref (`e7`), its selector, or its
    accessible name (`getByRole(..., name)`), case aside; None when the page holds no such element."""
    if not isinstance(elements, dict) or given in (None, ""):
        return None
    text = str(given).strip()
    if text in elements:
        return text
    low = text.lower().removeprefix("ref=")
    for field in ("ref", "selector", "name"):
        for key, element in elements.items():
            if isinstance(element, dict) and str(element.get(field) or "").strip().lower() == low:
                return key
    return None


def known_key(text: Any) -> bool:
    """Whether `keyboard.press` accepts `text`: one character, a named key, or a chord of them (`Control+A`)."""
    if not isinstance(text, str) or not text:
        return False
    if len(text) == 1:
        return True
    parts = text.split("+") if text != "+" else [text]
    return all(len(p) == 1 or p.lower() in KEY_NAMES or _NAMED.match(p.lower()) is not None for p in parts if p) \
        and all(parts)
