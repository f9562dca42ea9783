"""One compose function per goal shape (`task_synth/templates/shapes.yaml`), each run on the probe.

Each reads the world first and decides from it (which record a rule picks, which branch a condition
takes), writes the plan's steps, the request's fields (`work.fields`, filled into `requests.<shape>`),
the answer's lines and the facts to restate. A shape that finds nothing to decide on fails the attempt
(`BlockFailed`), as a person would not ask it of that world.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cworld.synth.offline.action_space import noun_of, verb_of
from cworld.synth.offline.composer import BlockFailed
from cworld.synth.offline.goal_chain import Named
from cworld.synth.offline.goal_roles import label_field
from cworld.synth.offline.schema_values import snake, words_of
from cworld.synth.offline.shape_chain import (
    _DATE_FIELD,
    _MONEY,
    _NUMBER,
    STALE,
    ShapeDrafter,
    Work,
    _named,
    answer_ref,
    enum_field,
    item_ref,
    named_records,
    numeric_fields,
    unique_extreme,
)

Compose = Callable[[ShapeDrafter, Work], None]


def _kind(work: Work, slot: str) -> str:
    unit = work.unit(slot)
    return noun_of(unit.tool, unit.kind) or "record"


def _look(d: ShapeDrafter, work: Work, slot: str) -> tuple[Named, str, Any]:
    """Find a record of the slot's kind and look at it: the record, a reference to its name in the look's
    answer, and that answer."""
    unit = work.unit(slot)
    if unit.use == "find":
        found, record = d.search(work, slot)
        opened = d.open(work, slot, found, found.ref(found.label_field))
        return (found, *opened) if opened else (found, found.ref(found.label_field), record)
    target = d.locate(work, slot, unit.kind or "", unit.server)
    step, answer = d.run(work, slot, target)
    return target, answer_ref(step, answer, target.label, target.ref(target.label_field)), answer


def _tell(d: ShapeDrafter, work: Work, slot: str, subject: str, text: str) -> None:
    unit = work.unit(slot)
    work.fields.update(svc_tell=d.service(unit), tell_kind=_kind(work, slot))
    work.fields["tell_clause"] = d.phrase("tell_clause", work)
    d.run(work, slot, None, label=subject, text=text)


_STATE = re.compile(r"(^|_)(status|state|stage|priority|severity|type|category|kind|role|visibility|plan|tier|"
                    r"level|language|country|city|department|team|channel|source|format|genre|phase)$")


def _detail(answer: Any, target: Named, state_only: bool = False) -> tuple[str, str] | None:
    """A short fact the look showed beside the name (a status, a category; `state_only`: only such a
    field, the kind a person decides on, never an email or a timestamp)."""
    record = answer if isinstance(answer, dict) else {}
    inner = next((v for v in record.values() if isinstance(v, dict)), None)
    for source in (record, inner or {}):
        fields = sorted(source.items(), key=lambda kv: not _STATE.search(snake(kv[0])))
        for key, value in fields:
            if state_only and (not _STATE.search(snake(key)) or not isinstance(value, str)
                               or len(value.split()) > 3 or value.endswith(".")):
                continue
            if key != target.label_field and isinstance(value, str | int | float) and not isinstance(value, bool) \
                    and 0 < len(str(value)) <= 40 and not snake(key).endswith(("id", "url", "key")) \
                    and "@" not in str(value) and not str(value).endswith(".") and len(str(value).split()) <= 4:
                return key, str(value)
    return None


def reconcile(d: ShapeDrafter, work: Work) -> None:
    """The source of truth in one service, the copy in another brought in line with it."""
    source, name_ref, answer = _look(d, work, "source")
    fix = work.unit("fix")
    target = d.locate(work, "fix", fix.kind or "", fix.server)
    text = f"Checked against {d.service(work.unit('source'))}: {name_ref}{_fact(work, 'source', answer, source, name_ref)}."
    d.run(work, "fix", target, text=text, label=None)
    work.fields.update(svc_a=d.service(work.unit("source")), kind_a=_kind(work, "source"), label_a=source.label,
                       svc_b=d.service(fix), kind_b=_kind(work, "fix"), label_b=target.label)
    work.hints.append(f"Checked: {name_ref}")
    work.reports.append((f"{_kind(work, 'source')} name", source.label))


def triage(d: ShapeDrafter, work: Work) -> None:
    """Go through a queue and act on the item a stated rule picks (the highest priority, the oldest)."""
    step, path, items = d.listing(work, "queue")
    rule, chosen = _rule(items)
    record = _named(work.unit("queue").kind or "", chosen, step.plan.id, path, work.unit("queue").server)
    d.run(work, "queue", record)
    name_ref = item_ref(step, path, chosen, record.label_field)
    work.fields.update(svc_a=d.service(work.unit("queue")), kind_a=_kind(work, "queue"), rule=rule,
                       verb=verb_of(work.unit("queue").tool))
    work.worked_out.append((record.label, "X", "the name of the one the rule picks"))
    _tell(d, work, "tell", f"Handled: {name_ref}", f"Triage: {name_ref} was picked ({rule}) and handled.")
    work.hints.append(f"Picked: {name_ref}")
    work.reports.append((f"{_kind(work, 'queue')} picked", record.label))


def _by(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda record: record[name]


def _rule(items: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    for name in numeric_fields(items, _NUMBER) + numeric_fields(items, _MONEY):
        chosen = unique_extreme(items, _by(name), highest=True)
        if chosen is not None:
            return f"the one with the highest {words_of(name)}", chosen
    for name in [k for k, v in items[0].items() if isinstance(v, str) and _DATE_FIELD.search(snake(k))]:
        if all(isinstance(i.get(name), str) and len(i[name]) >= 10 for i in items):
            chosen = unique_extreme(items, _by(name), highest=False)
            if chosen is not None:
                return f"the one with the earliest {words_of(name)}", chosen
    raise BlockFailed("the queue has no field a rule can rank its items by")


def schedule(d: ShapeDrafter, work: Work) -> None:
    """Put something found in one service on the schedule of another, on dates in the world's future."""
    source, name_ref, answer = _look(d, work, "source")
    fact = _fact(work, "source", answer, source, name_ref)
    d.run(work, "plan", None, label=name_ref, text=f"For {name_ref}{fact}.", dates=True)
    work.fields.update(svc_a=d.service(work.unit("source")), kind_a=_kind(work, "source"), label_a=source.label,
                       svc_b=d.service(work.unit("plan")), kind_b=_kind(work, "plan"))
    work.hints.append(f"Scheduled: {name_ref}")
    work.reports.append((f"{_kind(work, 'source')} name", source.label))


def budget(d: ShapeDrafter, work: Work) -> None:
    """Pick the one option within a budget, look at it, and record the choice elsewhere."""
    step, path, items = d.listing(work, "option")
    money, ranked = _cheapest(items)
    cheapest, next_up = ranked[0][money], ranked[1][money]
    limit = round(cheapest + (next_up - cheapest) / 2, 2)
    chosen = ranked[0]
    record = _named(work.unit("option").kind or "", chosen, step.plan.id, path, work.unit("option").server)
    name_ref = _looked(d, work, "option", record, step, path, chosen)
    price_ref = item_ref(step, path, chosen, money)
    d.run(work, "log", None, label=name_ref, text=f"Chosen within budget: {name_ref} at {price_ref}.")
    work.fields.update(svc_a=d.service(work.unit("option")), kind_a=_kind(work, "option"), limit=_amount(limit),
                       field=words_of(money), svc_b=d.service(work.unit("log")), kind_b=_kind(work, "log"))
    work.hints += [f"Chosen: {name_ref}", f"{words_of(money).capitalize()}: {price_ref}"]
    work.reports.append((f"{_kind(work, 'option')} chosen", record.label))


def _cheapest(items: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The price field and the options by it, when one option alone is the cheapest."""
    fields = numeric_fields(items, _MONEY)
    if not fields:
        raise BlockFailed("the options have no price to keep within a budget")
    money = fields[0]
    ranked = sorted(items, key=lambda r: r[money])
    if len(ranked) < 2 or ranked[0][money] == ranked[1][money]:
        raise BlockFailed("no single option fits a budget")
    return money, ranked


def _looked(d: ShapeDrafter, work: Work, slot: str, record: Named, step: Any, path: str,
            chosen: dict[str, Any]) -> str:
    """A reference to the chosen record's name: in the look's answer when the slot looks at it, else in
    the list it was chosen from."""
    listed = item_ref(step, path, chosen, record.label_field)
    if work.unit(slot).use != "look":
        work.named.append(record)
        opened = d.open(work, slot, record, listed)
        return opened[0] if opened else listed
    look, answer = d.run(work, slot, record)
    return answer_ref(look, answer, record.label, listed)


def _amount(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value):,}"


def migrate(d: ShapeDrafter, work: Work) -> None:
    """Copy a record from one service into another, keeping its name (and its text where both have one)."""
    source, name_ref, answer = _look(d, work, "source")
    text = f"Copied from {d.service(work.unit('source'))}: {name_ref}{_fact(work, 'source', answer, source, name_ref)}."
    d.run(work, "copy", None, label=name_ref, text=text)
    work.fields.update(svc_a=d.service(work.unit("source")), kind_a=_kind(work, "source"), label_a=source.label,
                       svc_b=d.service(work.unit("copy")), kind_b=_kind(work, "copy"))
    work.hints.append(f"Copied: {name_ref}")
    work.reports.append((f"{_kind(work, 'source')} name", source.label))


def form(d: ShapeDrafter, work: Work) -> None:
    """Type a record's name from one service into the field of the page open in the browser where such a name
    goes: a person's into a name field, an organisation's into a company field, anything else into the site's
    search box."""
    source, name_ref, _ = _look(d, work, "source")
    fill = work.unit("fill")
    target = _form_field(d, work, _kind(work, "source"))
    said = len(work.said)
    d.run(work, "fill", target, text=name_ref, label=None)
    del work.said[said:]  # the request quotes the name it types already
    work.fields.update(svc_a=d.service(work.unit("source")), kind_a=_kind(work, "source"), label_a=source.label,
                       svc_b=d.service(fill), label_b=target.label)
    work.hints.append(f"Typed: {name_ref}")
    work.reports.append((f"{_kind(work, 'source')} name", source.label))


_PERSON = re.compile(r"(^|\s)(contact|person|people|user|member|employee|customer|lead|patient|student|author|"
                     r"staff|attendee|guest|candidate|owner|assignee)s?$")
_ORGANISATION = re.compile(r"(^|\s)(company|companies|organi[sz]ation|account|vendor|supplier|client|business|"
                           r"merchant|partner|firm)s?$")


def _form_field(d: ShapeDrafter, work: Work, kind: str) -> Named:
    """The page's input a name of `kind` goes in: a field named for a person's or a company's name where the
    kind is one, else a search box; `BlockFailed` when the page has none."""
    fill = work.unit("fill")
    world = d.engine.world(work.seed).server(fill.server)
    records = (world.collection(fill.kind or "") if world is not None else None) or {}
    inputs = [(k, r) for k, r in records.items() if isinstance(r, dict) and r.get("role") in ("textbox", "searchbox")]
    word = "company" if _ORGANISATION.search(kind) else "name" if _PERSON.search(kind) else None
    named = [k for k, r in inputs if word and word in str(r.get("name") or "").lower().split()]
    found = named or [k for k, r in inputs if r.get("role") == "searchbox"]
    picked = d.record(work, fill.server, fill.kind or "", str(found[0])) if found else None
    if picked is None:
        raise BlockFailed(f"{fill.server}: the page has no field a {kind}'s name goes in")
    return picked


def report(d: ShapeDrafter, work: Work) -> None:
    """Count the records of one group and report the number (with one of them looked at) elsewhere."""
    step, path, items = d.listing(work, "source")
    group = _group(items)
    value = work.rng.choice(sorted({str(i[group]) for i in items}))
    members = [i for i in items if str(i[group]) == value]
    chosen = work.rng.choice(members)
    record = _named(work.unit("source").kind or "", chosen, step.plan.id, path, work.unit("source").server)
    name_ref = _looked(d, work, "source", record, step, path, chosen)
    count = len(members)
    kind = _kind(work, "source")
    text = f"{count} {kind} record(s) in {d.service(work.unit('source'))} have {words_of(group)} '{value}', " \
           f"among them {name_ref}."
    work.fields.update(svc_a=d.service(work.unit("source")), kind_a=kind, field=words_of(group), value=value,
                       label_a=record.label)
    work.worked_out.append((str(count), "N", "the number"))
    _tell(d, work, "tell", f"{kind.capitalize()} count: {value}", text)
    work.hints.append(f"Count: {count}")
    work.reports.append((f"number of {kind} records with {words_of(group)} '{value}'", str(count)))


def _group(items: list[dict[str, Any]]) -> str:
    """The field that sorts one page of records into a few named groups (a count over more than a page
    would depend on paging)."""
    group = enum_field(items)
    if group is None:
        raise BlockFailed("the records have no field that groups them")
    if len(items) >= 50:
        raise BlockFailed("the list is longer than one page: a count would depend on paging")
    return group


def conditional(d: ShapeDrafter, work: Work) -> None:
    """Read one value; if it is what the person expects, do one thing, else another."""
    source, name_ref, answer = _look(d, work, "check")
    detail = _detail(answer, source, state_only=True)
    if detail is None:
        raise BlockFailed("the record shows no value to decide on")
    key, actual = detail
    other = _other(d, work, source, key, actual)
    holds = other is None or work.rng.random() < 0.5
    branch = "yes" if holds else "no"
    unit = work.unit(branch)
    target = d.locate(work, branch, unit.kind, unit.server) if unit.target and unit.kind else None
    text = f"Follow-up on {name_ref}: its {words_of(key)} is {actual}."
    work.worked_out.append((str(actual), "V", f"the {words_of(key)} you find"))
    d.run(work, branch, target, label=f"Follow-up: {name_ref}", text=text)
    if other is None:
        raise BlockFailed("no other value to name in the condition")
    work.fields.update(svc_a=d.service(work.unit("check")), kind_a=_kind(work, "check"), label_a=source.label,
                       field=words_of(key), value=actual if holds else other,
                       svc_yes=d.service(work.unit("yes")), kind_yes=_kind(work, "yes"),
                       svc_no=d.service(work.unit("no")), kind_no=_kind(work, "no"),
                       target_yes=_target(d, work, "yes", target if holds else None),
                       target_no=_target(d, work, "no", None if holds else target))
    work.hints.append(f"{words_of(key).capitalize()}: {actual}")
    work.reports.append((f"{_kind(work, 'check')} {words_of(key)}", actual))


def _other(d: ShapeDrafter, work: Work, source: Named, key: str, actual: str) -> str | None:
    """A value other records of the kind hold that this one does not (so the condition reads as a real
    alternative and the other branch is taken)."""
    world = d.engine.world(work.seed).server(source.server)
    records = world.collection(source.entity) if world is not None else None
    values = sorted({str(r.get(key)) for r in list((records or {}).values())[:200] if isinstance(r, dict)
                     and isinstance(r.get(key), str | int | float) and str(r.get(key)) != actual
                     and len(str(r.get(key))) <= 40})
    return work.rng.choice(values) if values else None


def _target(d: ShapeDrafter, work: Work, branch: str, target: Named | None) -> str:
    """How the request names where a branch writes: a new record, or a record of the world (the branch not
    taken names one too, from the world, never run)."""
    unit = work.unit(branch)
    if not unit.target or not unit.kind:
        return "a new " + _kind(work, branch)
    if target is None:
        target = d.world_record(work, unit.server, unit.kind)
    return f"the {_kind(work, branch)} '{target.label}'"


def cleanup(d: ShapeDrafter, work: Work) -> None:
    """Remove the stale records of a kind (marked closed, cancelled...), or the oldest, then say so."""
    step, path, items = d.listing(work, "stale")
    unit = work.unit("stale")
    stale, rule = _stale(items, words_of(unit.kind or ""))
    removed = []
    for record in stale:
        named = _named(unit.kind or "", record, step.plan.id, path, unit.server)
        d.run(work, "stale", named)
        removed.append(item_ref(step, path, record, named.label_field))
        work.worked_out.append((named.label, "XYZ"[len(removed) - 1],
                                "the name of what the rule picks" if len(stale) == 1 else "the names of what the rule picks"))
        work.reports.append((f"{_kind(work, 'stale')} removed", named.label))
    work.skip_constraints.add("safety")
    work.fields.update(svc_a=d.service(unit), kind_a=_kind(work, "stale"), rule=rule, verb=verb_of(unit.tool))
    _tell(d, work, "tell", "Clean-up done", f"Removed from {d.service(unit)}: {', '.join(removed)}.")
    work.hints += [f"Removed: {r}" for r in removed]


def _stale(items: list[dict[str, Any]], kind: str) -> tuple[list[dict[str, Any]], str]:
    """The records a person would call stale (1-3 marked closed, cancelled...; else the oldest) and the rule
    that says so."""
    group = next((k for k, v in items[0].items() if isinstance(v, str) and k != label_field(items[0])
                  and any(str(i.get(k, "")).lower() in STALE for i in items)), None)
    stale = [i for i in items if group and str(i.get(group, "")).lower() in STALE]
    if group and 1 <= len(stale) <= 3:
        if len({str(i[group]).lower() for i in stale}) > 1:
            raise BlockFailed("stale records of several states")
        return stale, f"every {kind} whose {words_of(group)} is '{stale[0][group]}'"
    dated = [k for k, v in items[0].items() if isinstance(v, str) and _DATE_FIELD.search(snake(k))
             and all(isinstance(i.get(k), str) and len(i[k]) >= 10 for i in items)]
    oldest = unique_extreme(items, lambda r: r[dated[0]], highest=False) if dated else None
    if oldest is None:
        raise BlockFailed("nothing in the list is stale by a rule a person would state")
    return [oldest], f"the {kind} with the earliest {words_of(dated[0])}"


def brief(d: ShapeDrafter, work: Work) -> None:
    """Gather what two services show about one record each into one note in a third, as a person briefs
    themselves before a meeting: each read feeds the note (its name by reference), so data flows from both."""
    said: list[str] = []
    names: list[str] = []
    for slot, key in (("source", "a"), ("other", "b")):
        record, name_ref, answer = _look(d, work, slot)
        fact = _fact(work, slot, answer, record, name_ref)
        names.append(name_ref)
        said.append(f"{name_ref} in {d.service(work.unit(slot))}{fact}")
        work.fields.update({f"svc_{key}": d.service(work.unit(slot)), f"kind_{key}": _kind(work, slot),
                            f"label_{key}": record.label})
        work.hints.append(f"Found: {name_ref}")
        work.reports.append((f"{_kind(work, slot)} name", record.label))
    d.run(work, "note", None, label=f"Brief: {names[0]} and {names[1]}", text=f"Brief: {said[0]}; {said[1]}.")
    work.fields.update(svc_c=d.service(work.unit("note")), kind_c=_kind(work, "note"))


_PATH = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?")


def _fact(work: Work, slot: str, answer: Any, record: Named, name_ref: str) -> str:
    """` (status: open)`: a short detail the look showed beside the name (`_detail`), by reference into its
    answer where the name is not read from it, so the write that carries it takes something the look found;
    empty when the answer shows none."""
    step = work.slot_steps.get(slot, [""])[-1]
    if isinstance(answer, str) and len(answer) <= TEXT_SHOWN and len(_WORD.findall(answer)) >= 6 \
            and not _reads(step, name_ref):
        return " (it reads: {{" + step + "}})"  # a page fetched as text: what it shows is the text
    detail = _detail(answer, record)
    return f" ({words_of(detail[0])}: {_shown(work, slot, answer, detail, name_ref)})" if detail else ""


TEXT_SHOWN = 400
"""The longest text answer a note quotes whole (a fetched page's few lines, not a document; an empty template
`Title: \nURL: ` says nothing)."""
_WORD = re.compile(r"[A-Za-z]{3,}")


def _reads(step: str, ref: str) -> bool:
    """`ref` reads step `step`'s answer (`{{s1.name}}`, `{{s1[name=x].name}}`)."""
    return any("{{" + f"{step}{c}" in ref for c in ".[")


def _shown(work: Work, slot: str, answer: Any, detail: tuple[str, str], name_ref: str) -> str:
    """The detail's value, by reference into the look's answer when the name is not read from it (a look whose
    answer does not repeat the name still feeds the note, so no read is idle)."""
    step = work.slot_steps.get(slot, [""])[-1]
    if _reads(step, name_ref) or not isinstance(answer, dict):  # `s1[name=x]`: the record of a list
        return detail[1]
    inner = next((k for k, v in answer.items() if isinstance(v, dict) and detail[0] in v), None)
    path = detail[0] if detail[0] in answer else f"{inner}.{detail[0]}" if inner else None
    return "{{" + f"{step}.{path}" + "}}" if path and _PATH.fullmatch(path) else detail[1]


def _states(items: list[dict[str, Any]]) -> None:
    """Some record shows a value a condition can read (a status, a type)."""
    if not any(_detail(r, _named("", r, "", "", ""), state_only=True) for r in items):
        raise BlockFailed("the record shows no value to decide on")


DECIDES: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "triage": _rule, "budget": _cheapest, "report": _group, "cleanup": lambda items: _stale(items, ""),
    "conditional": _states,
}
"""What each deciding shape reads off a listing's records; it raises `BlockFailed` when they hold nothing to
decide on. The composers call these, and the sampler tries them on the world's records of a unit's kind
(`decides`) so it draws no unit whose records would fail the shape."""


def decides(shape: str, records: list[Any]) -> bool:
    """Whether the named ones of `records` hold what `shape` decides on (shapes that decide nothing: True)."""
    test = DECIDES.get(shape)
    if test is None:
        return True
    items = named_records(records)
    if not items:
        return False
    try:
        test(items)
    except BlockFailed:
        return False
    return True


COMPOSERS: dict[str, Compose] = {
    "reconcile": reconcile, "triage": triage, "schedule": schedule, "budget": budget, "migrate": migrate,
    "report": report, "conditional": conditional, "cleanup": cleanup, "sync": migrate, "brief": brief, "form": form,
}
