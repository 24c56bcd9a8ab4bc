"""Personal data in text: e-mail addresses, phone numbers, payment card numbers.

Pure functions, standard library only; :func:`mama_plugin.privacy.redact_text` masks what
:func:`find` reports unless the user keeps personal data (``keep_personal_data``). A card
number must pass the Luhn check and start with an issuer's prefix; a phone number must be
written as one (a ``+`` country code, ``(555) 010-0199``/``555-010-0199`` grouping, or a
number after a word such as *phone* or *tel*), so timestamps, ids and versions stay.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(
    r"(?<![\w.+%-])(?P<local>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@"
    r"(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,24}))"
    r"(?![\w-])"
)
# What a clip leaves of an address: "ada.lovelace@exam…".
_EMAIL_CLIPPED = re.compile(
    r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9.-]*(?:…|\.\.\.)"
)
# Addresses that name a service, not a person; file names such as icon@2x.png.
_SERVICE_LOCALS = frozenset({"git", "noreply", "no-reply", "donotreply", "mailer-daemon"})
_FILE_TLDS = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "js", "ts", "tsx", "jsx", "py", "css", "json"}
    | {"md", "txt", "html", "lock", "map", "yaml", "yml", "toml", "sh", "rs", "go"}
)

_PHONE_INTERNATIONAL = re.compile(
    r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){2,5}(?![\w-])"
)
_PHONE_GROUPED = re.compile(r"(?<![\w.-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\w-])")
_PHONE_WORDS = ("phone", "tel", "mobile", "cell", "fax", "whatsapp", "sms")
_PHONE_NAMED = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|fax|whatsapp|sms)\b[^\d\n+]{0,12}"
    r"(?P<number>\+?\d[\d ().-]{5,18}\d)(?![\w-])"
)

_CARD = re.compile(r"(?<![\d.,-])\d(?:[ -]?\d){12,18}(?![\d-])")
# Issuer prefixes (IIN ranges) of the major networks, with their lengths.
_ISSUERS = (
    (re.compile(r"4"), (13, 16, 19)),  # Visa
    (re.compile(r"5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)"), (16,)),  # Mastercard
    (re.compile(r"3[47]"), (15,)),  # American Express
    (re.compile(r"6(?:011|5|4[4-9])"), (16, 17, 18, 19)),  # Discover
    (re.compile(r"35(?:2[89]|[3-8]\d)"), (16, 17, 18, 19)),  # JCB
    (re.compile(r"3(?:0[0-5]|[68])"), (14, 15, 16, 17, 18, 19)),  # Diners Club
    (re.compile(r"62"), (16, 17, 18, 19)),  # UnionPay
)


def luhn_valid(digits: str) -> bool:
    """True when ``digits`` passes the Luhn (mod 10) check."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def is_card_number(candidate: str) -> bool:
    """True for a payment card number: an issuer's prefix and length, and a valid Luhn digit."""
    digits = re.sub(r"[ -]", "", candidate)
    if not digits.isdigit() or len(set(digits)) < 2:
        return False
    return luhn_valid(digits) and any(
        prefix.match(digits) and len(digits) in lengths for prefix, lengths in _ISSUERS
    )


def _digit_count(text: str) -> int:
    return sum(map(str.isdigit, text))


def find(text: str) -> list[tuple[int, int, str]]:
    """Personal data in ``text``: ``(start, end, kind)`` with kind email, phone or card."""
    spans: list[tuple[int, int, str]] = []
    if "@" in text:
        for m in _EMAIL.finditer(text):
            local, tld = m.group("local").lower(), m.group("tld").lower()
            service = local in _SERVICE_LOCALS or m.group("domain").lower().endswith(
                "noreply.github.com"
            )
            if not service and tld not in _FILE_TLDS:
                spans.append((m.start(), m.end(), "email"))
        spans += [(m.start(), m.end(), "email") for m in _EMAIL_CLIPPED.finditer(text)]
    if _digit_count(text) < 7:
        return spans
    for m in _CARD.finditer(text):
        if is_card_number(m.group()):
            spans.append((m.start(), m.end(), "card"))
    if "+" in text:
        for m in _PHONE_INTERNATIONAL.finditer(text):
            if 8 <= _digit_count(m.group()) <= 15:
                spans.append((m.start(), m.end(), "phone"))
    spans += [(m.start(), m.end(), "phone") for m in _PHONE_GROUPED.finditer(text)]
    lowered = text.lower()
    if any(word in lowered for word in _PHONE_WORDS):
        for m in _PHONE_NAMED.finditer(text):
            if 7 <= _digit_count(m.group("number")) <= 15:
                spans.append((m.start("number"), m.end("number"), "phone"))
    return spans
