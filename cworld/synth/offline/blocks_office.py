"""Office blocks: schedule a meeting, block a trip in the calendar, email someone, post or DM in chat,
write and share a document, set a reminder. Names, channels and folders come from the probe's world."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from cworld.sandbox.framework import world
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.phrases import day

CAL, MAIL, CHAT, DOCS, CLOCK = "calendar/", "mail/", "chat/", "docs/", "clock/"


def first_name(name: str) -> str:
    return name.split()[0]


def namesakes(name: str, names: list[str]) -> list[str]:
    """Other people in `names` who share this person's first name."""
    return [n for n in names if n != name and first_name(n) == first_name(name)]


def colleague(c: Composer, names: list[str], avoid: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """A colleague present in `names` (an app's directory); one with a namesake half the time."""
    cast = {p["name"] for p in world.cast(c.seed)["colleagues"]}
    pool = sorted(n for n in names if n in cast and n not in avoid)
    twins = [n for n in pool if namesakes(n, names)]
    return c.pick(twins if twins and c.rng.random() < 0.5 else pool)


def _exclude_twin(c: Composer, key: str, name: str, names: dict[str, str], tool: str, argument: str) -> None:
    """When someone else shares the first name, say who is meant and forbid the other one's id."""
    others = namesakes(name, list(names))
    if others:
        c.decide(key, "exclusion", f"I mean {name}, not {others[0]}; leave {first_name(others[0])} "
                 f"{others[0].split()[-1]} out of it.",
                 {"kind": "argument_excludes", "tool": tool, "argument": argument, "value": [names[o] for o in others]})


# --- calendar ---------------------------------------------------------------------------------------
def _workday(c: Composer, lo: int, hi: int) -> date:
    when = c.today + timedelta(days=c.rng.randint(lo, hi))
    while when.weekday() >= 5:
        when += timedelta(days=1)
    return when


def meeting(c: Composer) -> None:
    directory = {p["name"]: pid for pid, p in c.state["calendar"]["directory"].items()}
    guests = [colleague(c, list(directory))]
    if c.rng.random() < 0.5:
        guests.append(colleague(c, list(directory), avoid=set(guests) | {n for g in guests for n in namesakes(g, list(directory))}))
    when, minutes, video = _workday(c, 1, 9), c.rng.choice([30, 45, 60]), c.rng.random() < 0.5
    slot, room = _slot_with_room(c, [directory[g] for g in guests], when, minutes, video)
    topic = c.pick(world.cast(c.seed)["topics"])
    title = topic["meeting"]
    c.subgoal("schedule_meeting", f"Schedule '{title}' with {', '.join(guests)}")
    refs = []
    for n, guest in enumerate(guests):
        found = c.step(f"find_guest_{n + 1}", CAL + "find_people", {"query": first_name(guest)},
                       f"look up {guest}'s person id to invite them to {title}")
        refs.append(found.ref(f"people[name={guest}].person_id"))
    slots = c.step("free_slots", CAL + "find_free_slots", {"person_ids": refs, "date": when.isoformat(),
                                                           "duration_minutes": minutes},
                   f"find when {' and '.join(first_name(g) for g in guests)} and I are all free that day")
    index = slots.value["slots"].index(slot)
    rooms = c.step("rooms", CAL + "list_rooms", {"min_capacity": len(guests) + 1, "start": slots.ref(f"slots.{index}.0"),
                                                 "end": slots.ref(f"slots.{index}.1")},
                   "check which meeting rooms are free at that time")
    event = c.step("meeting", CAL + "create_event", {
        "title": title, "start": slots.ref(f"slots.{index}.0"), "end": slots.ref(f"slots.{index}.1"),
        "attendee_ids": refs, "room_id": rooms.ref(f"rooms[room_id={room['room_id']}].room_id"),
        "description": topic["agenda"]}, f"put {title} in the calendar with the invitations and the room")
    need = "a room with video" if video else "a room"
    c.decide("slot", "trade_off", f"Take the earliest time that day when everyone is free and {need} for "
             f"{len(guests) + 1} is available, even if a later slot would suit the room better.",
             {"kind": "argument_equals", "tool": CAL + "create_event", "argument": "start", "value": slot[0]}, ["finish_by"])
    cutoff = f"{when.isoformat()}T{max(int(slot[1][11:13]) + 1, 17):02d}:00:00Z"
    c.decide("finish_by", "deadline", f"The meeting has to be over by {cutoff[11:16]} UTC on {day(when)}.",
             {"kind": "deadline", "tool": CAL + "create_event", "argument": "end", "value": cutoff}, ["slot"])
    _exclude_twin(c, "guest_twin", guests[0], directory, CAL + "create_event", "attendee_ids")
    c.say(f"Set up a {minutes}-minute '{title}' meeting with {' and '.join(guests)} on {day(when)}, with {need}.",
          f"I need {minutes} minutes with {' and '.join(guests)} on {day(when)} about {topic['agenda'].lower()}; "
          f"book it with {need}.")
    c.hint(f"'{title}' is booked from {event.ref('start')} to {event.ref('end')} in room {room['name']}.")
    c.report("the meeting room", room["name"])
    c.report("the start time", event.ref("start"))
    c.facts.update(topic=f"the {title} meeting", when=when.isoformat(), people=guests,
                   window=(event.ref("start"), event.ref("end"), slot[0], slot[1]),
                   summary=f"'{title}' is on {day(when)}, {slot[0][11:16]}-{slot[1][11:16]} UTC, in {room['name']}.")


def _slot_with_room(c: Composer, person_ids: list[str], when: date, minutes: int, video: bool) -> tuple[Any, Any]:
    free = c.peek(CAL + "find_free_slots", person_ids=person_ids, date=when.isoformat(), duration_minutes=minutes) or {}
    for slot in free.get("slots", []):
        listed = c.peek(CAL + "list_rooms", min_capacity=len(person_ids) + 1, start=slot[0], end=slot[1]) or {}
        rooms = [r for r in listed.get("rooms", []) if r["available"] and (r["video"] or not video)]
        if rooms:
            return slot, rooms[0]
    raise BlockFailed(f"no common free slot with a room on {when}")


def trip_event(c: Composer) -> None:
    start_ref, end_ref, start, end = c.facts["window"]
    title = f"Travel: {c.facts['topic']}"
    c.subgoal("block_calendar", "Block the travel time in the calendar")
    event = c.step("travel_event", CAL + "create_event", {"title": title, "start": start_ref, "end": end_ref,
                                                          "allow_overlap": True},
                   f"block the travel time of {c.facts['topic']} in my calendar")
    c.say("Block the travel time in my calendar so nobody books me then.",
          "Put the flight in my calendar, from take-off to landing.")
    c.hint(f"Calendar blocked from {event.ref('start')} to {event.ref('end')}.")


# --- mail and chat ------------------------------------------------------------------------------------
def email(c: Composer) -> None:
    contacts = {p["name"]: cid for cid, p in c.state["mail"]["contacts"].items()}
    who = colleague(c, list(contacts), avoid=set(c.facts.get("people", [])))
    me = world.cast(c.seed)["me"]
    c.subgoal("email", f"Email {who} the details")
    found = c.step("find_contact", MAIL + "search_contacts", {"query": first_name(who)}, f"find {who}'s contact id")
    to = [found.ref(f"contacts[name={who}].contact_id")]
    body = f"Hi {first_name(who)},\n\n{c.facts['summary']}\n\nBest,\n{me['first']}"
    subject = f"Update: {c.facts['topic']}"
    if c.wants(MAIL + "create_draft", MAIL + "send_draft"):
        draft = c.step("draft", MAIL + "create_draft", {"to": to, "subject": subject, "body": body},
                       f"write the email about {c.facts['topic']} to {who} as a draft")
        c.step("send", MAIL + "send_draft", {"draft_id": draft.ref("draft_id")}, f"send the draft to {who}")
        tool = MAIL + "create_draft"
    else:
        c.step("send", MAIL + "send_email", {"to": to, "subject": subject, "body": body},
               f"email {who} the details of {c.facts['topic']}")
        tool = MAIL + "send_email"
    _exclude_twin(c, "mail_twin", who, contacts, tool, "to")
    c.say(f"Email {who} the details.", f"Send {who} an email with the details.",
          f"Let {who} know by email.")


def chat_post(c: Composer) -> None:
    channels = [ch for ch in c.state["chat"]["channels"].values() if not ch["archived"] and not ch["private"]
                and ch["name"] not in ("general", "random")]
    channel = c.pick(sorted(channels, key=lambda ch: ch["id"]))
    banned = [ch["id"] for ch in c.state["chat"]["channels"].values() if ch["name"] in ("general", "random")]
    token, login = _login(c)
    c.subgoal("announce", f"Post the news in #{channel['name']}", after=[*c.facts.get("anchor_goals", []), login])
    found = c.step("channel", CHAT + "list_channels", {"query": channel["name"]}, f"find the #{channel['name']} channel")
    ref = found.ref(f"channels[name={channel['name']}].channel_id")
    if c.state["chat"]["me"] not in channel["members"]:
        c.step("join", CHAT + "join_channel", {"token": token, "channel_id": ref}, f"join #{channel['name']} to post there")
    c.step("post", CHAT + "post_message", {"token": token, "channel_id": ref, "text": c.facts["summary"]},
           f"tell #{channel['name']} about {c.facts['topic']}")
    if banned:
        c.decide("channel", "exclusion", "Keep it out of the company-wide channels (#general and #random).",
                 {"kind": "argument_excludes", "tool": CHAT + "post_message", "argument": "channel_id", "value": banned})
    c.say(f"Post the details in the #{channel['name']} channel.", f"Let the #{channel['name']} channel know.",
          f"Share it with the team in #{channel['name']}.")


def chat_dm(c: Composer) -> None:
    users = {u["name"]: uid for uid, u in c.state["chat"]["users"].items() if uid != c.state["chat"]["me"]}
    who = colleague(c, list(users), avoid=set(c.facts.get("people", [])))
    token, login = _login(c)
    c.subgoal("direct_message", f"Message {who} directly", after=[*c.facts.get("anchor_goals", []), login])
    found = c.step("find_user", CHAT + "search_users", {"query": first_name(who)}, f"find {who}'s chat user id")
    c.step("dm", CHAT + "send_direct_message", {"token": token, "user_id": found.ref(f"users[name={who}].user_id"),
                                                "text": f"Hi {first_name(who)}! {c.facts['summary']}"},
           f"send {who} the details of {c.facts['topic']} in a direct message")
    _exclude_twin(c, "dm_twin", who, users, CHAT + "send_direct_message", "user_id")
    c.say(f"Send {who} a direct message on chat with the details.", f"Ping {who} privately on chat about it.")


def _login(c: Composer) -> tuple[str, str]:
    """(token reference, sign-in sub-goal id); one sign-in serves every chat block of the task."""
    if "chat_token" not in c.facts:
        goal = c.subgoal("chat_login", "Sign in to the team chat", after=[])
        me = c.step("profile", CHAT + "get_my_profile", {}, "get my chat handle to sign in before posting")
        token = c.step("login", CHAT + "login", {"handle": me.ref("handle")}, "sign in to chat to be allowed to post")
        c.facts["chat_token"] = (token.ref("token"), goal)
    return c.facts["chat_token"]


# --- documents and reminders --------------------------------------------------------------------------------
def doc_note(c: Composer) -> None:
    folders = {f["name"]: fid for fid, f in c.state["docs"]["folders"].items()}
    folder = c.pick(sorted(n for n in folders if n != "Archive"))
    directory = {p["name"]: pid for pid, p in c.state["docs"]["directory"].items() if pid != c.state["docs"]["me"]}
    who = colleague(c, list(directory), avoid=set(c.facts.get("people", [])))
    title = f"Notes: {c.facts['topic']}"
    c.subgoal("write_note", f"Write up {c.facts['topic']} and share it with {who}")
    listed = c.step("folders", DOCS + "list_folders", {}, f"find the {folder} folder to file the notes on {c.facts['topic']}")
    doc = c.step("note", DOCS + "create_document", {"title": title, "folder_id": listed.ref(f"folders[name={folder}].folder_id"),
                                                   "content": f"# {title}\n\n{c.facts['summary']}"},
                 f"write the notes on {c.facts['topic']}")
    person = c.step("find_reader", DOCS + "find_people", {"query": first_name(who)}, f"get {who}'s id to share the notes")
    role = c.rng.choice(["viewer", "editor"])
    c.step("share", DOCS + "share_document", {"document_id": doc.ref("document_id"), "role": role,
                                              "person_id": person.ref(f"people[name={who}].person_id")},
           f"share the notes with {who} so they can {'edit' if role == 'editor' else 'read'} them")
    _exclude_twin(c, "doc_twin", who, directory, DOCS + "share_document", "person_id")
    c.say(f"Write it up in a document in my {folder} folder and share it with {who} ({'can edit' if role == 'editor' else 'read only'}).",
          f"Keep a note of it in a new document under {folder}, shared with {who} as {'an editor' if role == 'editor' else 'a viewer'}.")


def reminder(c: Composer) -> None:
    when = date.fromisoformat(c.facts["when"])
    local_now = c.now.astimezone(_zone(c)).replace(tzinfo=None)
    at = datetime.combine(when - timedelta(days=1), datetime.min.time()).replace(hour=18)
    if at <= local_now + timedelta(hours=1):
        at = datetime.combine(when, datetime.min.time()).replace(hour=7)
        if at <= local_now + timedelta(hours=1):
            raise BlockFailed("too late for a reminder")
    c.subgoal("reminder", "Set a reminder")
    c.step("timezone", CLOCK + "get_timezone", {}, "check my time zone, since reminders are set in my local time")
    c.step("remind", CLOCK + "schedule_reminder", {"text": f"Coming up: {c.facts['topic']}", "at": at.isoformat()},
           f"remind me of {c.facts['topic']} ahead of time")
    c.say(f"Remind me at {at:%H:%M} my time on {day(at.date())}.", f"Set a reminder for {at:%H:%M} (my local time) on {day(at.date())}.")


def _zone(c: Composer) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(c.state["clock"]["timezone"])


BLOCKS = [
    Block("meeting", True, frozenset(CAL + n for n in ("find_people", "find_free_slots", "list_rooms", "create_event")),
          meeting, gives=frozenset({"topic", "summary", "when", "window", "people", "future"})),
    Block("trip_event", False, frozenset({CAL + "create_event"}), trip_event, needs=frozenset({"window", "city"})),
    Block("email", False, frozenset(MAIL + n for n in ("search_contacts", "send_email", "create_draft", "send_draft")),
          email, needs=frozenset({"summary"})),
    Block("chat_post", False, frozenset(CHAT + n for n in ("get_my_profile", "login", "list_channels", "join_channel",
                                                           "post_message")), chat_post, needs=frozenset({"summary"})),
    Block("chat_dm", False, frozenset(CHAT + n for n in ("get_my_profile", "login", "search_users",
                                                         "send_direct_message")), chat_dm, needs=frozenset({"summary"})),
    Block("doc_note", False, frozenset(DOCS + n for n in ("list_folders", "create_document", "find_people",
                                                          "share_document")), doc_note, needs=frozenset({"summary"})),
    Block("reminder", False, frozenset(CLOCK + n for n in ("get_timezone", "schedule_reminder")), reminder,
          needs=frozenset({"when", "future"})),
]
