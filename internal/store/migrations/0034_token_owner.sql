-- 0034: the owner an API token acts as (issue 27 point 2: several owners
-- on one shared store). A gateway accepts only its own owner's tokens. ''
-- is a token made before owners were recorded: the first gateway it is
-- presented to claims it for its owner (owner.Actions.TokenVerify).
ALTER TABLE api_tokens ADD COLUMN owner TEXT NOT NULL DEFAULT '';
