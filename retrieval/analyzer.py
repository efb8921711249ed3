"""Lexical analyzer: turns runbook text and on-call queries into BM25 terms.

`analyze` is used for indexing and querying alike, so both sides always agree. The text is cut
into raw tokens at whitespace and at every symbol except ``- . / : % + @ ~ _ '`` (so ``=``,
``==``, quotes, brackets, commas, ``|``, ``*``, ``#``, ``?``, ``&``, backticks and Markdown
punctuation are separators). Edge punctuation is trimmed, except a flag's ``-``/``--``, a
path's leading ``/`` or ``~/``, a dot-file's ``.``, a port's ``:`` and a percentage's ``%``.

What one raw token emits, in this order:

- plain word ``Restarting``: its Snowball stem ``restart``. English function words are dropped
  (``_STOPWORDS``); words that matter in ops (not, no, down, up, off, out, all, full) are kept.
- case-marked word ``ECONNREFUSED``, ``PagerDuty``, ``IPs``: the lower-cased whole, unstemmed,
  then its stem when different (so a lower-case spelling in the other text still matches).
- CamelCase ``KubePodCrashLooping`` / ``HTTPServerErrors``: the above, then each distinct camel
  part stemmed (``kube pod crash loop``; acronyms stay together: ``http server error``).
- alphanumeric ``x509``, ``E11000``, ``15m``, ``512Mi``, ``503``: the lower-cased whole only.
- numeric compound ``10.0.3.17``, ``2024-01-15``: the whole only; if it has ``/``, ``:`` or
  ``%`` also its pieces (``10.0.0.0/16`` -> ``10.0.0.0``, ``16``; ``:5432`` -> ``5432``;
  ``90%`` -> ``90``; a time's colons are not split). A version ``v1.28.3`` also emits ``1.28.3``.
- compound ``kube-state-metrics``, ``pg_stat_replication``, ``api.example.com``, ``ORA-00942``:
  the lower-cased whole (unstemmed), then each distinct leaf part analysed as above.
- path-like compound (``/ : @ +`` inside) ``/var/lib/docker``, ``host:5432``: the whole, then
  each distinct segment (a segment that is itself a compound emits its whole once) and leaf.
- flag ``--grace-period``, ``--force``, ``-n``: the flag with its dashes, then the terms of its
  name (stemmed like prose, so "force" in a sentence matches ``--force``), leaving out the
  name's own whole and one-letter names: ``--grace-period grace period``, ``--force forc``,
  ``-n``.
- URL ``https://host/a/b``: the host as a compound and each path segment as a raw token, all
  de-duplicated across the URL; no whole-URL term; an ``http``/``https`` scheme is dropped.
  Query strings are already cut apart at ``?``, ``&`` and ``=``.
- contraction ``doesn't`` / ``can't``: the word's terms then ``not``; ``'s``, ``'re``... dropped.

So a raw token emits every term at most once: a compound counts once as a whole and once per
distinct part, per occurrence. Dropped: pure punctuation, terms over 64 characters (a long
compound still emits its short parts), raw tokens over 512 characters, hex strings of 17+
characters with a digit (hashes), UUIDs and runs of more than 16 digits.

`query_terms` is the distinct terms of `analyze(query)` minus conversational filler ("please",
"help", "anyone"...), so every query term is a term `analyze` can put in the index.
"""

from __future__ import annotations

import re

import Stemmer

MAX_TERM_LENGTH = 64
_MAX_RAW_LENGTH = 512

_STEMMER = Stemmer.Stemmer("english")

# Function words only; ops-relevant words (not, no, down, up, off, out, all, full, over, under,
# before, after, only, more, without...) are deliberately absent.
_STOPWORDS = frozenset(
    """
    a an the and or but nor if then else than so as of at by for from in into onto on to with
    within via per is are was were be been being am do does did doing has have had having
    i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves
    this that these those there here which who whom whose what when where why how
    can could will would shall should may might must ought just also too very such each both
    some any other own same about again further once while during because though although
    whether e.g i.e eg ie etc s t d ll m re ve
    """.split()
)

# Conversational filler dropped from queries only (compared with analyzed, i.e. stemmed, terms).
_QUERY_FILLER = frozenset(
    _STEMMER.stemWords(
        """
        please pls plz thanks thank thx hi hello hey help anyone anybody someone somebody
        know tell explain need want wonder wondering question ask asking guys folks
        """.split()
    )
)

# Word characters joined by - . / : % + @ ~ ' (at most 3 of them before the first word
# character, so that runs of punctuation are scanned in linear time), optionally ending in %.
_RAW_TOKEN = re.compile(r"[\-./:%+@~'’]{0,3}\w+(?:[\-./:%+@~'’]+\w+)*%?")
_EDGE = "-./:%+@~'’_"
_SEGMENT_SEP = re.compile(r"[/:@+]+")
_PART_SEP = re.compile(r"[-_~%]+|\.(?!\d)|(?<!\d)\.")
_ANY_SEP = re.compile(r"[-_~%/:@+.]+")
_PIECE_SEP = re.compile(r"[/:%@+]+")
_PIECE_SEP_NO_COLON = re.compile(r"[/%@+]+")
_CAMEL = re.compile(r"[a-z][0-9]*[A-Z]|[A-Z]{2}[a-z]{2}|[0-9][A-Z][a-z]")
_CAMEL_PART = re.compile(r"[A-Z]{2,}[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_VERSION = re.compile(r"v\d+(?:\.\d+)+")
_HEX_NOISE = re.compile(r"[0-9a-f]{17,}|\d{17,}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_URL = re.compile(r"([a-z][a-z0-9+.\-]*)://([^/]*)(.*)", re.IGNORECASE)
_ASCII_DIGITS = frozenset("0123456789")
_CONTRACTIONS = {"can't": ("can", "not"), "won't": ("will", "not"), "ain't": ("not",)}
_CLITICS = frozenset({"s", "t", "d", "ll", "m", "re", "ve"})


def analyze(text: str) -> list[str]:
    """Return the terms of a document or query in order, with repeats."""
    out: list[str] = []
    append = out.append
    stem = _STEMMER.stemWord
    for tok in _RAW_TOKEN.findall(text):
        if tok.isalpha() and (tok.islower() or tok[1:].islower()):  # fast path: a plain word
            low = tok.lower()
            if low not in _STOPWORDS and len(low) <= MAX_TERM_LENGTH:
                append(stem(low))
        elif len(tok) <= _MAX_RAW_LENGTH:
            out.extend(_raw_token_terms(tok))
    return out


def query_terms(text: str) -> list[str]:
    """Return the distinct terms of a query in first-appearance order, filler words removed."""
    distinct = list(dict.fromkeys(analyze(text)))
    kept = [term for term in distinct if term not in _QUERY_FILLER]
    return kept or distinct


def _raw_token_terms(tok: str) -> list[str]:
    """Terms of one raw token (as found by `_RAW_TOKEN`)."""
    tok = _trim(tok)
    if not tok:
        return []
    if "'" in tok or "’" in tok:
        return _contraction_terms(tok)
    return _token_terms(tok)


def _trim(tok: str) -> str:
    """Strip edge punctuation, keeping the prefixes and suffix that carry meaning."""
    core = tok.strip(_EDGE)
    if not core or core == tok:
        return core
    start = len(tok) - len(tok.lstrip(_EDGE))
    lead = tok[:start].lstrip("'’")
    if tok[start + len(core) :].startswith("%") and core[-1] in _ASCII_DIGITS:
        core += "%"
    if lead in ("-", "--", "/", "~/", ".", "/.", "~/."):
        return lead + core
    if lead == ":" and core.isdigit():
        return lead + core
    return core


def _token_terms(tok: str) -> list[str]:
    """Terms of a trimmed token without apostrophes."""
    if tok.isalnum():
        return _simple_terms(tok)
    if tok[0] == "-":
        return _flag_terms(tok)
    if "://" in tok:
        return _url_terms(tok)
    return _compound_terms(tok)


def _simple_terms(tok: str) -> list[str]:
    """Terms of a token made of letters and digits only."""
    low = tok.lower()
    if len(low) > MAX_TERM_LENGTH or low in _STOPWORDS:
        return []
    if tok.isalpha():
        if _CAMEL.search(tok):
            return _camel_terms(tok, low)
        if tok.islower() or tok[1:].islower() or len(tok) == 1:
            return [_STEMMER.stemWord(low)]
        return _whole_and_stem(low)  # ECONNREFUSED, IPs
    if _HEX_NOISE.fullmatch(low):
        return []
    if tok[0].isalpha() and _CAMEL.search(tok):
        return _camel_terms(tok, low)  # Http2Errors, S3Bucket
    return [low]


def _whole_and_stem(low: str) -> list[str]:
    """The unstemmed whole, then its stem when it differs."""
    stem = _STEMMER.stemWord(low)
    return [low] if stem == low else [low, stem]


def _camel_terms(tok: str, low: str) -> list[str]:
    """Whole (and its stem) of a CamelCase word, then each distinct part stemmed."""
    terms = _whole_and_stem(low)
    for part in _CAMEL_PART.findall(tok):
        part_low = part.lower()
        if part_low in _STOPWORDS:
            continue
        term = part_low if not part_low.isalpha() else _STEMMER.stemWord(part_low)
        if term not in terms:
            terms.append(term)
    return terms


def _flag_terms(tok: str) -> list[str]:
    """A CLI flag with its dashes, then the terms of its name (`--grace-period`: grace, period)."""
    low = tok.lower()
    terms = [low] if len(low) <= MAX_TERM_LENGTH else []
    name = tok.lstrip("-")
    if name.isalnum():
        name_terms = _simple_terms(name)
    else:
        name_terms = _compound_terms(name)
        if name_terms and name_terms[0] == name.lower():
            name_terms = name_terms[1:]  # the name's whole would double count the flag
    _add_unique(terms, [term for term in name_terms if len(term) > 1])  # -n: no bare "n"
    return terms


def _compound_terms(tok: str) -> list[str]:
    """Whole of a compound token, then its distinct segments and leaf parts."""
    low = tok.lower()
    if low in _STOPWORDS or _UUID.fullmatch(low):
        return []
    if _VERSION.fullmatch(low):
        return [low, low[1:]]
    if _is_numeric(low):
        return _numeric_terms(low)
    terms = [low] if len(low) <= MAX_TERM_LENGTH else []
    segments = [seg for seg in _SEGMENT_SEP.split(tok) if seg]
    if len(segments) > 1:
        for seg in segments:
            _add_unique(terms, _segment_terms(seg))
    elif segments:
        _add_leaves(segments[0], terms)
    return terms


def _segment_terms(seg: str) -> list[str]:
    """Terms of one path segment: its own whole when compound, then its leaves."""
    seg = seg.strip(_EDGE)
    if not seg:
        return []
    return _simple_terms(seg) if seg.isalnum() else _compound_terms(seg)


def _add_leaves(tok: str, terms: list[str]) -> None:
    """Append the distinct terms of the leaf parts of a compound without segment separators."""
    for leaf in _PART_SEP.split(tok):
        if not leaf:
            continue
        if leaf.isalnum():
            _add_unique(terms, _simple_terms(leaf))
            continue
        low = leaf.lower()  # dotted numbers such as 1.28.3, v1.28.3 or k8s1.2: kept whole
        if len(low) <= MAX_TERM_LENGTH:
            _add_unique(terms, [low, low[1:]] if _VERSION.fullmatch(low) else [low])


def _is_numeric(low: str) -> bool:
    """True when every part of a compound starts with a digit (IPs, dates, ports, CIDRs)."""
    parts = [part for part in _ANY_SEP.split(low) if part]
    return bool(parts) and all(part[0] in _ASCII_DIGITS for part in parts)


def _numeric_terms(low: str) -> list[str]:
    """The whole of a numeric compound, then its pieces split at / % and a lone : (a port)."""
    terms = [low] if len(low) <= MAX_TERM_LENGTH else []
    separator = _PIECE_SEP if low.count(":") == 1 else _PIECE_SEP_NO_COLON
    pieces = [p.strip(_EDGE) for p in separator.split(low)]
    pieces = [p for p in pieces if p and len(p) <= MAX_TERM_LENGTH]
    if len(pieces) > 1 or (pieces and pieces[0] != low):
        _add_unique(terms, pieces)
    return terms


def _url_terms(tok: str) -> list[str]:
    """Host as a compound and each path segment as a token, de-duplicated across the URL."""
    match = _URL.fullmatch(tok)
    if not match:
        return _compound_terms(tok)
    scheme, host, path = match.groups()
    terms: list[str] = []
    if scheme.lower() not in ("http", "https"):
        _add_unique(terms, _segment_terms(scheme))
    host = host.rpartition("@")[2]  # never index credentials
    _add_unique(terms, _segment_terms(host))
    for seg in path.split("/"):
        seg = _trim(seg)
        if seg:
            _add_unique(terms, _token_terms(seg))
    return terms


def _contraction_terms(tok: str) -> list[str]:
    """Terms of a token with apostrophes: `doesn't` -> does (a stopword), not."""
    tok = tok.replace("’", "'")
    special = _CONTRACTIONS.get(tok.lower())
    if special:
        return [word for word in special if word not in _STOPWORDS]
    head, *tails = tok.split("'")
    negated = bool(tails) and tails[0].lower() == "t" and head[-1:].lower() == "n"
    terms = _raw_token_terms(head[:-1] if negated else head)
    for tail in tails:
        if tail.lower() not in _CLITICS:
            _add_unique(terms, _raw_token_terms(tail))
    if negated:
        terms.append("not")
    return terms


def _add_unique(terms: list[str], new: list[str]) -> None:
    """Append the terms of `new` that are not yet in `terms`."""
    for term in new:
        if term not in terms:
            terms.append(term)
