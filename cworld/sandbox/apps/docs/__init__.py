"""Docs: documents and folders with version history, sharing, access requests, locks and comments.

Roles decide what you may do: viewers read and comment, editors also edit, move and share, owners also
unshare and delete. A viewer gets edit rights with `request_edit_access`. A locked document must be
unlocked with its password first (its owner sent it by mail). Saving with `update_document` needs the
version you read (`expected_version`): if someone saved in between, it is a conflict, not an overwrite.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import edges
from cworld.sandbox.apps.docs.state import seed_state
from cworld.sandbox.apps.docs.tools import DocsTools


class DocsApp(DocsTools):
    name = "docs"
    volatile_paths = ("documents.**.saved_at", "comments.*.at")
    title = "Docs"
    description = "Documents and folders: read, search, write, version history, sharing, access requests, comments."
    category = "documents"
    prerequisites = edges([
        ("list_documents", "get_document", "produces", "document_id"),
        ("search_documents", "get_document", "produces", "document_id"),
        ("get_document", "update_document", "produces", "expected_version",
         "saves must name the version they were based on"),
        ("request_edit_access", "update_document", "requires", "document_id",
         "viewers must get edit access first"),
        ("request_edit_access", "share_document", "requires", "document_id"),
        ("unlock_document", "get_document", "requires", "document_id", "locked documents"),
        ("unlock_document", "update_document", "requires", "document_id"),
        ("mail/search_messages", "unlock_document", "produces", "password", "the owner mailed the password"),
        ("find_people", "share_document", "produces", "person_id"),
        ("list_versions", "restore_version", "produces", "version"),
        ("list_folders", "move_document", "produces", "folder_id"),
        ("list_comments", "resolve_comment", "produces", "comment_id"),
    ])

    initial_state = seed_state
