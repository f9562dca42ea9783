"""Category cards: what a kind of app holds and does, which card each tool belongs to, and what a tool's
call does under its card (operation kind and entity)."""
