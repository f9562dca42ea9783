"""The docs app's tools: people and folders, reading, writing, access and comments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.people import PeopleQuery, people_page
from cworld.sandbox.apps._shared.records import OpenPage, OpenPageSize, lookup, paginate, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, matches
from cworld.sandbox.apps.docs.models import (
    AccessRequest,
    Comment,
    CommentList,
    Document,
    DocumentInfo,
    DocumentPage,
    Folder,
    FolderList,
    Person,
    PersonPage,
    Version,
    VersionContent,
    VersionList,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool

MAX_CONTENT = 100_000
RANK = {"viewer": 1, "editor": 2, "owner": 3}

DocId = Annotated[str, Field(description="document id, e.g. doc_0002 (from list_documents or search_documents)")]
Content = Annotated[str, Field(max_length=MAX_CONTENT, description="document text (Markdown)")]



def _shelves(doc: dict[str, Any]) -> list[tuple[str, str | None, bool]]:
    """Where a document shows, per person who can open it: (person, its folder or None for any folder, its
    trashed flag): the index the document lists and folder counts read (either flag: both groups, merged)."""
    return [(person, folder, doc["trashed"]) for person, role in doc["access"].items() if role is not None
            for folder in (doc["folder_id"], None)]

def _lower_name(folder: dict[str, Any]) -> list[str]:
    """A folder's name as names are unique (case aside): the index a new folder's name is checked in."""
    return [folder["name"].lower()]


def _on_document(comment: dict[str, Any]) -> list[tuple[str, bool]]:
    """(its document, whether it is resolved): the groups a document's comments are listed from."""
    return [(comment["document_id"], bool(comment["resolved"]))]


class DocsTools(SandboxApp):
    """Tools of the docs app (a mixin of `DocsApp`)."""

    # --- helpers -------------------------------------------------------------------------
    def _rec(self, document_id: str) -> dict[str, Any]:
        rec = self.state["documents"].get(document_id)
        if rec is None or (self._role(rec) is None):
            raise AppError("not_found", f"no document '{document_id}' that you can see; list_documents gives ids")
        return rec

    def _role(self, rec: dict[str, Any]) -> str | None:
        return rec["access"].get(self.state["me"])

    def _need(self, rec: dict[str, Any], role: str, action: str) -> None:
        mine = self._role(rec) or "viewer"
        if RANK[mine] < RANK[role]:
            step = "request_edit_access first" if role == "editor" else f"ask the owner ({rec['owner']})"
            raise AppError("permission_denied", f"you are {mine} of '{rec['title']}' and cannot {action}; {step}")

    def _open(self, rec: dict[str, Any]) -> None:
        if rec["locked"] and not rec["unlocked"]:
            raise AppError("precondition", f"'{rec['title']}' is locked; unlock_document with its password first "
                           "(ask the owner, who may have mailed it)")

    def _live(self, rec: dict[str, Any]) -> None:
        if rec["trashed"]:
            raise AppError("conflict", f"'{rec['title']}' is in the trash")

    def _info(self, rec: dict[str, Any]) -> DocumentInfo:
        return DocumentInfo(document_id=rec["id"], title=rec["title"], folder_id=rec["folder_id"], owner=rec["owner"],
                            your_role=self._role(rec), version=rec["version"], updated_at=rec["updated_at"],
                            locked=rec["locked"] and not rec["unlocked"], trashed=rec["trashed"])

    def _full(self, rec: dict[str, Any]) -> Document:
        return Document(**self._info(rec).model_dump(), content=rec["content"], shared_with=dict(sorted(rec["access"].items())))

    def _save(self, rec: dict[str, Any], content: str) -> Document:
        rec["version"] += 1
        rec["versions"].append({"version": rec["version"], "content": content, "author": self.state["me"],
                                "saved_at": iso(self.now)})
        rec.update(content=content, updated_at=iso(self.now))
        return self._full(rec)

    def _editable(self, document_id: str, action: str) -> dict[str, Any]:
        rec = self._rec(document_id)
        self._live(rec)
        self._need(rec, "editor", action)
        self._open(rec)
        return rec

    def _folder(self, folder_id: str) -> dict[str, Any]:
        return lookup(self.state["folders"], folder_id,
                      f"no folder '{folder_id}'; list_folders gives folder ids")

    def _page(self, recs: Sequence[dict[str, Any]], page: int, page_size: int) -> DocumentPage:
        """A page of documents already in their order: most recently updated first."""
        chunk, meta = paginate(recs, page, page_size)
        return DocumentPage(documents=[self._info(d) for d in chunk], **meta)

    def _shelf(self, folder_id: str | None, include_trashed: bool) -> Sequence[dict[str, Any]]:
        """The documents you can open in a folder (None: any), most recently updated first, trashed ones when
        asked: one sorted index serves the document lists and the folders' counts (its window's length)."""
        shelves = [(self.state["me"], folder_id, trashed) for trashed in ((False, True) if include_trashed else (False,))]
        return self.ordered("documents", ("updated_at", "id"), reverse=True, having=(_shelves, shelves))

    # --- people and folders --------------------------------------------------------------
    @tool(read_only=True)
    def find_people(self, query: PeopleQuery = "", page: OpenPage = 1, page_size: OpenPageSize = 10) -> PersonPage:
        """Look people up to get the person ids that sharing needs."""
        return people_page(self, "directory", query, page, page_size, Person, PersonPage)

    @tool(read_only=True)
    def list_folders(self, page: OpenPage = 1, page_size: OpenPageSize = 20) -> FolderList:
        """Your folders and how many documents each holds (20 a page by default)."""
        chunk, meta = paginate_in_order(self.state["folders"].values(), page, page_size)
        return FolderList(folders=[Folder(folder_id=f["id"], name=f["name"], documents=len(self._shelf(f["id"], False)))
                                   for f in chunk], **meta)

    @tool(read_only=False)
    def create_folder(self, name: Annotated[str, Field(min_length=1, max_length=80, description="folder name")]) -> Folder:
        """Make a new folder. Names are unique."""
        if self.keys_having("folders", _lower_name, name.lower()):
            raise AppError("conflict", f"a folder named '{name}' exists; list_folders gives its id")
        rec = {"id": self.new_id("fld"), "name": name}
        self.state["folders"][rec["id"]] = rec
        return Folder(folder_id=rec["id"], name=name, documents=0)

    # --- reading -------------------------------------------------------------------------
    @tool(read_only=True)
    def list_documents(
        self,
        folder_id: Annotated[str | None, Field(description="one folder; default: all")] = None,
        include_trashed: Annotated[bool, Field(description="also list documents in the trash")] = False,
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> DocumentPage:
        """Documents you can see, most recently updated first (titles can repeat: check folder and version)."""
        if folder_id is not None:
            self._folder(folder_id)
        return self._page(self._shelf(folder_id, include_trashed), page, page_size)

    @tool(read_only=True)
    def search_documents(
        self,
        query: Annotated[str, Field(min_length=1, description="words in the title or text")],
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> DocumentPage:
        """Find documents by words in the title or text (locked ones match by title only)."""
        docs = [d for d in self.matching("documents", query, ("title", "content"))
                if self._role(d) is not None and not d["trashed"]
                and matches(query, d["title"], "" if d["locked"] and not d["unlocked"] else d["content"])]
        return self._page(sorted(docs, key=lambda d: (d["updated_at"], d["id"]), reverse=True), page, page_size)

    @tool(read_only=True)
    def get_document(self, document_id: DocId) -> Document:
        """The document's current text, version number and who it is shared with."""
        rec = self._rec(document_id)
        self._open(rec)
        return self._full(rec)

    @tool(read_only=True)
    def list_versions(self, document_id: DocId, page: OpenPage = 1, page_size: OpenPageSize = 20) -> VersionList:
        """The saved versions of a document, oldest first (20 a page by default)."""
        rec = self._rec(document_id)
        self._open(rec)
        chunk, meta = paginate(rec["versions"], page, page_size)
        versions = [Version(version=v["version"], author=v["author"], saved_at=v["saved_at"], length=len(v["content"]),
                            preview=(v["content"].strip().splitlines() or [""])[0][:80]) for v in chunk]
        return VersionList(document_id=rec["id"], current=rec["version"], versions=versions, **meta)

    @tool(read_only=True)
    def get_version(self, document_id: DocId, version: Annotated[int, Field(ge=1, description="version number")]) -> VersionContent:
        """The full text of one saved version."""
        rec = self._rec(document_id)
        self._open(rec)
        return VersionContent(document_id=rec["id"], version=version, content=self._version(rec, version)["content"])

    def _version(self, rec: dict[str, Any], version: int) -> dict[str, Any]:
        found = next((v for v in rec["versions"] if v["version"] == version), None)
        if found is None:
            raise AppError("not_found", f"'{rec['title']}' has versions 1-{rec['version']}, not {version}")
        return found

    # --- writing -------------------------------------------------------------------------
    @tool(read_only=False)
    def create_document(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200, description="title")],
        folder_id: Annotated[str, Field(description="folder id from list_folders")],
        content: Content = "",
    ) -> Document:
        """Create a document you own (version 1)."""
        self._folder(folder_id)
        me, now = self.state["me"], iso(self.now)
        rec = {"id": self.new_id("doc"), "title": title, "folder_id": folder_id, "owner": me, "content": content,
               "version": 1, "versions": [{"version": 1, "content": content, "author": me, "saved_at": now}],
               "access": {me: "owner"}, "locked": False, "password": None, "unlocked": False,
               "trashed": False, "updated_at": now}
        self.state["documents"][rec["id"]] = rec
        return self._full(rec)

    @tool(read_only=False)
    def update_document(
        self,
        document_id: DocId,
        content: Content,
        expected_version: Annotated[int, Field(ge=1, description="the version you read (get_document's version)")],
    ) -> Document:
        """Replace the text, saving a new version. Fails if the document changed since `expected_version`."""
        rec = self._editable(document_id, "edit it")
        if rec["version"] != expected_version:
            raise AppError("conflict", f"'{rec['title']}' is at version {rec['version']}, not {expected_version}; "
                           "get_document again and redo your change on the current text")
        return self._save(rec, content)

    @tool(read_only=False)
    def append_to_document(
        self, document_id: DocId, text: Annotated[str, Field(min_length=1, max_length=20000, description="text to add")]
    ) -> Document:
        """Add text at the end of a document (a new version), without needing the version number."""
        rec = self._editable(document_id, "edit it")
        if len(rec["content"]) + len(text) > MAX_CONTENT:
            raise AppError("limit", f"a document holds at most {MAX_CONTENT} characters")
        return self._save(rec, rec["content"].rstrip("\n") + "\n\n" + text)

    @tool(read_only=False)
    def restore_version(self, document_id: DocId, version: Annotated[int, Field(ge=1, description="version to bring back")]) -> Document:
        """Make an old version current again (saved as a new version; history is kept)."""
        rec = self._editable(document_id, "restore versions")
        return self._save(rec, self._version(rec, version)["content"])

    @tool(read_only=False, idempotent=True)
    def move_document(self, document_id: DocId, folder_id: Annotated[str, Field(description="target folder id")]) -> DocumentInfo:
        """Move a document to another folder (editors and owners)."""
        rec = self._rec(document_id)
        self._live(rec)
        self._need(rec, "editor", "move it")
        rec["folder_id"] = self._folder(folder_id)["id"]
        return self._info(rec)

    @tool(read_only=False, destructive=True, idempotent=True)
    def delete_document(self, document_id: DocId) -> DocumentInfo:
        """Move a document you own to the trash."""
        rec = self._rec(document_id)
        self._need(rec, "owner", "delete it")
        rec["trashed"] = True
        return self._info(rec)

    # --- access --------------------------------------------------------------------------
    @tool(read_only=False, idempotent=True)
    def request_edit_access(
        self, document_id: DocId, reason: Annotated[str, Field(max_length=500, description="why you need to edit")] = ""
    ) -> AccessRequest:
        """Ask the owner for edit rights on a document shared with you read-only."""
        rec = self._rec(document_id)
        self._live(rec)
        if RANK[self._role(rec) or "viewer"] >= RANK["editor"]:
            raise AppError("conflict", f"you can already edit '{rec['title']}' (you are {self._role(rec)})")
        rec["access"][self.state["me"]] = "editor"
        req = {"id": self.new_id("req"), "document_id": rec["id"], "role": "editor", "status": "approved",
               "reason": reason, "at": iso(self.now)}
        self.state["access_requests"][req["id"]] = req
        return AccessRequest(request_id=req["id"], document_id=rec["id"], role="editor", status="approved",
                             your_role="editor")

    @tool(read_only=False)
    def unlock_document(self, document_id: DocId, password: Annotated[str, Field(description="the document's password")]) -> DocumentInfo:
        """Unlock a password-protected document for reading, editing and sharing (for this session)."""
        rec = self._rec(document_id)
        if not rec["locked"] or rec["unlocked"]:
            raise AppError("conflict", f"'{rec['title']}' is not locked")
        if password != rec["password"]:
            raise AppError("auth", f"wrong password for '{rec['title']}'; the owner may have mailed it")
        rec["unlocked"] = True
        return self._info(rec)

    @tool(read_only=False, idempotent=True)
    def share_document(
        self,
        document_id: DocId,
        person_id: Annotated[str, Field(description="person id from find_people")],
        role: Annotated[Literal["viewer", "editor"], Field(description="what they may do")],
    ) -> Document:
        """Share a document with someone, or change their role (editors and owners; not on locked documents)."""
        rec = self._editable(document_id, "share it")
        if person_id not in self.state["directory"]:
            raise AppError("not_found", f"no person '{person_id}'; find_people gives person ids")
        if rec["access"].get(person_id) == "owner":
            raise AppError("conflict", "that person owns the document")
        rec["access"][person_id] = role
        return self._full(rec)

    @tool(read_only=False, destructive=True, idempotent=True)
    def unshare_document(self, document_id: DocId, person_id: Annotated[str, Field(description="person id")]) -> Document:
        """Take away someone's access (owners only)."""
        rec = self._rec(document_id)
        self._need(rec, "owner", "unshare it")
        if person_id not in rec["access"] or rec["access"][person_id] == "owner":
            raise AppError("not_found", f"'{rec['title']}' is not shared with {person_id}")
        del rec["access"][person_id]
        return self._full(rec)

    # --- comments ------------------------------------------------------------------------
    @tool(read_only=True)
    def list_comments(
        self, document_id: DocId, include_resolved: Annotated[bool, Field(description="also resolved ones")] = False,
        page: OpenPage = 1, page_size: OpenPageSize = 20,
    ) -> CommentList:
        """Comments on a document, oldest first (20 a page by default)."""
        self._rec(document_id)
        found = self.ordered("comments", ("at", "id"), having=(_on_document, [(document_id, False)] + (
            [(document_id, True)] if include_resolved else [])))
        chunk, meta = paginate(found, page, page_size)
        return CommentList(comments=[Comment(comment_id=c["id"], **{k: c[k] for k in ("document_id", "author", "text",
                                                                                        "at", "resolved")}) for c in chunk],
                           **meta)

    @tool(read_only=False)
    def add_comment(self, document_id: DocId, text: Annotated[str, Field(min_length=1, max_length=2000, description="comment")]) -> Comment:
        """Comment on a document (anyone it is shared with may comment)."""
        rec = self._rec(document_id)
        self._open(rec)
        c = {"id": self.new_id("cmt"), "document_id": rec["id"], "author": self.state["me"], "text": text,
             "at": iso(self.now), "resolved": False}
        self.state["comments"][c["id"]] = c
        return Comment(comment_id=c["id"], **{k: c[k] for k in ("document_id", "author", "text", "at", "resolved")})

    @tool(read_only=False, idempotent=True)
    def resolve_comment(self, comment_id: Annotated[str, Field(description="comment id from list_comments")]) -> Comment:
        """Mark a comment resolved (editors and owners)."""
        c = self.state["comments"].get(comment_id)
        if c is None:
            raise AppError("not_found", f"no comment '{comment_id}'; list_comments gives ids")
        self._need(self._rec(c["document_id"]), "editor", "resolve comments")
        c["resolved"] = True
        return Comment(comment_id=c["id"], **{k: c[k] for k in ("document_id", "author", "text", "at", "resolved")})
