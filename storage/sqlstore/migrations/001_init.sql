-- Tokens replaced per dialect: TEXT_C (text compared byte by byte), BIGINT, BOOL, JSON_TEXT.
-- Statements are separated by lines holding only "--;".
CREATE TABLE scim_teams (
	team TEXT_C PRIMARY KEY,
	seq BIGINT NOT NULL
);
--;
CREATE TABLE scim_users (
	team TEXT_C NOT NULL,
	id TEXT_C NOT NULL,
	seq BIGINT NOT NULL,
	user_name TEXT_C NOT NULL,
	user_name_key TEXT_C NOT NULL,
	external_id TEXT_C NOT NULL,
	display_name TEXT_C NOT NULL,
	display_name_key TEXT_C NOT NULL,
	active BOOL NOT NULL,
	role TEXT_C NOT NULL,
	send_email BOOL NOT NULL,
	attributes JSON_TEXT NOT NULL,
	created_us BIGINT NOT NULL,
	modified_us BIGINT NOT NULL,
	version BIGINT NOT NULL,
	PRIMARY KEY (team, id)
);
--;
CREATE UNIQUE INDEX scim_users_name ON scim_users (team, user_name_key);
--;
CREATE INDEX scim_users_seq ON scim_users (team, seq);
--;
CREATE TABLE scim_groups (
	team TEXT_C NOT NULL,
	id TEXT_C NOT NULL,
	seq BIGINT NOT NULL,
	display_name TEXT_C NOT NULL,
	display_name_key TEXT_C NOT NULL,
	external_id TEXT_C NOT NULL,
	role TEXT_C NOT NULL,
	created_us BIGINT NOT NULL,
	modified_us BIGINT NOT NULL,
	version BIGINT NOT NULL,
	PRIMARY KEY (team, id)
);
--;
CREATE UNIQUE INDEX scim_groups_name ON scim_groups (team, display_name_key);
--;
CREATE INDEX scim_groups_seq ON scim_groups (team, seq);
--;
CREATE TABLE scim_members (
	team TEXT_C NOT NULL,
	group_id TEXT_C NOT NULL,
	user_id TEXT_C NOT NULL,
	pos BIGINT NOT NULL,
	PRIMARY KEY (team, group_id, user_id),
	FOREIGN KEY (team, group_id) REFERENCES scim_groups (team, id) ON DELETE CASCADE,
	FOREIGN KEY (team, user_id) REFERENCES scim_users (team, id) ON DELETE CASCADE
);
--;
CREATE INDEX scim_members_user ON scim_members (team, user_id);
--;
CREATE TABLE reporting_elements (
	tenant TEXT_C NOT NULL,
	pos BIGINT NOT NULL,
	facet_name TEXT_C NOT NULL,
	element JSON_TEXT NOT NULL,
	PRIMARY KEY (tenant, pos)
);
--;
CREATE INDEX reporting_elements_facet ON reporting_elements (tenant, facet_name, pos);
--;
CREATE TABLE rate_limits (
	key TEXT_C PRIMARY KEY,
	window_start_ns BIGINT NOT NULL,
	window_ns BIGINT NOT NULL,
	count BIGINT NOT NULL
);
--;
CREATE TABLE km_imports (
	source TEXT_C PRIMARY KEY,
	digest TEXT_C NOT NULL,
	rows_loaded BIGINT NOT NULL
)
