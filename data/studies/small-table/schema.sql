-- Study 001/004's table, exactly as the seed gives it (the heap's fillfactor is the arm's).
CREATE TABLE small_table (
    group_id       integer NOT NULL,
    user_id         integer NOT NULL,
    team_id         integer NOT NULL,
    activity_log_id integer NOT NULL,
    edited_at       timestamp without time zone NOT NULL,
    PRIMARY KEY (group_id, user_id)
)
-- And set fillfactor only at Heap
-- WITH (FILLFACTOR=50)
;

CREATE INDEX ON small_table (team_id);

-- What the upsert script reads: each user's current group and team (the seed does not give
-- them; README, "Study 001: the data model").
CREATE TABLE users (
    user_id  integer PRIMARY KEY,
    group_id integer NOT NULL,
    team_id  integer NOT NULL
);

CREATE SEQUENCE activity_log_id_seq;
