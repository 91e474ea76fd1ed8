-- An llm logs.db with the schema of llm/migrations.py (migrations up to
-- m021_tool_results_exception) and three conversations.
CREATE TABLE [_llm_migrations] ([name] TEXT PRIMARY KEY, [applied_at] TEXT);
CREATE TABLE [conversations] ([id] TEXT PRIMARY KEY, [name] TEXT, [model] TEXT);
CREATE TABLE [schemas] ([id] TEXT PRIMARY KEY, [content] TEXT);
CREATE TABLE [responses] (
  [id] TEXT PRIMARY KEY, [model] TEXT, [prompt] TEXT, [system] TEXT, [prompt_json] TEXT,
  [options_json] TEXT, [response] TEXT, [response_json] TEXT,
  [conversation_id] TEXT REFERENCES [conversations]([id]), [duration_ms] INTEGER, [datetime_utc] TEXT,
  [input_tokens] INTEGER, [output_tokens] INTEGER, [token_details] TEXT,
  [schema_id] TEXT REFERENCES [schemas]([id]), [resolved_model] TEXT);
CREATE TABLE [attachments] ([id] TEXT PRIMARY KEY, [type] TEXT, [path] TEXT, [url] TEXT, [content] BLOB);
CREATE TABLE [prompt_attachments] ([response_id] TEXT REFERENCES [responses]([id]),
  [attachment_id] TEXT REFERENCES [attachments]([id]), [order] INTEGER, PRIMARY KEY ([response_id], [attachment_id]));
CREATE TABLE [tools] ([id] INTEGER PRIMARY KEY, [hash] TEXT, [name] TEXT, [description] TEXT, [input_schema] TEXT, [plugin] TEXT);
CREATE TABLE [tool_responses] ([tool_id] INTEGER REFERENCES [tools]([id]), [response_id] TEXT REFERENCES [responses]([id]), PRIMARY KEY ([tool_id], [response_id]));
CREATE TABLE [tool_calls] ([id] INTEGER PRIMARY KEY, [response_id] TEXT REFERENCES [responses]([id]),
  [tool_id] INTEGER REFERENCES [tools]([id]), [name] TEXT, [arguments] TEXT, [tool_call_id] TEXT);
CREATE TABLE [tool_instances] ([id] INTEGER PRIMARY KEY, [plugin] TEXT, [name] TEXT, [arguments] TEXT);
CREATE TABLE [tool_results] ([id] INTEGER PRIMARY KEY, [response_id] TEXT REFERENCES [responses]([id]),
  [tool_id] INTEGER REFERENCES [tools]([id]), [name] TEXT, [output] TEXT, [tool_call_id] TEXT,
  [instance_id] INTEGER REFERENCES [tool_instances]([id]), [exception] TEXT);

INSERT INTO conversations VALUES ('01j8conv0000000000000000001', 'Ten names for cheesecakes', 'gpt-4o-mini');
INSERT INTO responses VALUES ('01j8resp0000000000000000001', 'gpt-4o-mini', 'Ten names for cheesecakes', 'Be brief', NULL, '{}',
  '1. Creamy Cloud' || char(10) || '2. Berry Bliss', NULL, '01j8conv0000000000000000001', 1520, '2024-09-20T18:00:01.123456', 21, 14, NULL, NULL, 'gpt-4o-mini-2024-07-18');
INSERT INTO responses VALUES ('01j8resp0000000000000000002', 'gpt-4o-mini', 'Two more', 'Be brief', NULL, '{}',
  '11. Lemon Drift' || char(10) || '12. Mocha Moon', NULL, '01j8conv0000000000000000001', 900, '2024-09-20T18:00:30.000001', 40, 12, NULL, NULL, NULL);

INSERT INTO conversations VALUES ('01j8conv0000000000000000002', 'What time is it', 'gpt-4.1-mini');
INSERT INTO tools VALUES (1, 'h1', 'llm_time', 'Returns the current time', '{"type":"object","properties":{}}', NULL);
INSERT INTO responses VALUES ('01j8resp0000000000000000003', 'gpt-4.1-mini', 'What time is it?', NULL, NULL, '{}',
  '', NULL, '01j8conv0000000000000000002', 800, '2025-05-28T09:00:00.000000', 50, 10, NULL, NULL, NULL);
INSERT INTO tool_calls VALUES (1, '01j8resp0000000000000000003', 1, 'llm_time', '{}', 'call_abc');
INSERT INTO responses VALUES ('01j8resp0000000000000000004', 'gpt-4.1-mini', '', NULL, NULL, '{}',
  'It is 09:00 UTC.', NULL, '01j8conv0000000000000000002', 700, '2025-05-28T09:00:01.500000', 80, 9, NULL, NULL, NULL);
INSERT INTO tool_results VALUES (1, '01j8resp0000000000000000004', 1, 'llm_time', '{"utc_time": "2025-05-28 09:00:00 UTC"}', 'call_abc', NULL, NULL);
INSERT INTO responses VALUES ('01j8resp0000000000000000005', 'gpt-4.1-mini', 'And in Tokyo? Use the clock tool.', NULL, NULL, '{}',
  '', NULL, '01j8conv0000000000000000002', 700, '2025-05-28T09:01:00.000000', 90, 9, NULL, NULL, NULL);
INSERT INTO tool_calls VALUES (2, '01j8resp0000000000000000005', NULL, 'clock', '{"tz": "Asia/Tokyo"', 'call_def');
INSERT INTO responses VALUES ('01j8resp0000000000000000006', 'gpt-4.1-mini', '', NULL, NULL, '{}',
  'The clock tool failed.', NULL, '01j8conv0000000000000000002', 700, '2025-05-28T09:01:02.000000', 95, 6, NULL, NULL, NULL);
INSERT INTO tool_results VALUES (2, '01j8resp0000000000000000006', NULL, 'clock', '', 'call_def', NULL, 'ValueError: unknown tool clock');

INSERT INTO responses VALUES ('01j8resp0000000000000000007', 'gpt-4o', 'Describe this image', NULL, NULL, '{}',
  'A red square.', NULL, NULL, 1200, '2025-06-01T12:00:00.000000', 300, 5, NULL, NULL, NULL);
INSERT INTO attachments VALUES ('att1', 'image/png', NULL, 'https://static.simonwillison.net/static/2024/pelican.jpg', NULL);
INSERT INTO attachments VALUES ('att2', 'image/png', NULL, NULL, X'89504E470D0A1A0A');
INSERT INTO prompt_attachments VALUES ('01j8resp0000000000000000007', 'att1', 0);
INSERT INTO prompt_attachments VALUES ('01j8resp0000000000000000007', 'att2', 1);
