-- 0032: the language a chat's person reads homard's cards and notices in
-- (issue 26 point 3): the platform's language code of the chat's last
-- message or press that carried one ("zh-hans", "en"), '' when none did
-- (the config's lang decides then). Kept across restarts so that a card
-- queued outside a turn (a task's) speaks the chat's language too.
ALTER TABLE chat_settings ADD COLUMN lang TEXT NOT NULL DEFAULT '' CHECK (length(lang) <= 35);
