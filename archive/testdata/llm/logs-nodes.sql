-- An llm logs.db with the node-tree schema of llm's docs/logging.md
-- ("Messages, parts and nodes"): each message stored once in messages with
-- its typed parts in parts, positioned by nodes; a response records the
-- leaf of what it sent (input_node_id), where its new input began
-- (first_input_node_id) and the leaf after its output (output_node_id).
CREATE TABLE [conversations] ([id] TEXT PRIMARY KEY, [name] TEXT, [model] TEXT);
CREATE TABLE [schemas] ([id] TEXT PRIMARY KEY, [content] TEXT);
CREATE TABLE [messages] ([id] TEXT PRIMARY KEY, [role] TEXT, [provider_metadata] TEXT);
CREATE TABLE [nodes] ([id] TEXT PRIMARY KEY, [parent_id] TEXT REFERENCES [nodes]([id]),
  [message_id] TEXT REFERENCES [messages]([id]), [depth] INTEGER);
CREATE TABLE [responses] (
  [id] TEXT PRIMARY KEY, [model] TEXT, [resolved_model] TEXT,
  [conversation_id] TEXT REFERENCES [conversations]([id]),
  [input_node_id] TEXT REFERENCES [nodes]([id]), [first_input_node_id] TEXT REFERENCES [nodes]([id]),
  [output_node_id] TEXT REFERENCES [nodes]([id]),
  [prompt] TEXT, [system] TEXT, [response] TEXT, [reasoning] TEXT, [options_json] TEXT,
  [schema_id] TEXT REFERENCES [schemas]([id]), [prompt_json] TEXT, [response_json] TEXT,
  [duration_ms] INTEGER, [datetime_utc] TEXT, [input_tokens] INTEGER, [output_tokens] INTEGER, [token_details] TEXT);
CREATE TABLE [attachments] ([id] TEXT PRIMARY KEY, [type] TEXT, [path] TEXT, [url] TEXT, [content] BLOB);
CREATE TABLE [tool_instances] ([id] INTEGER PRIMARY KEY, [plugin] TEXT, [name] TEXT, [arguments] TEXT);
CREATE TABLE [parts] ([id] INTEGER PRIMARY KEY, [message_id] TEXT REFERENCES [messages]([id]), [order] INTEGER,
  [type] TEXT, [text] TEXT, [redacted] INTEGER, [name] TEXT, [arguments] TEXT, [output] TEXT, [tool_call_id] TEXT,
  [server_executed] INTEGER, [exception] TEXT, [instance_id] INTEGER REFERENCES [tool_instances]([id]),
  [attachment_id] TEXT REFERENCES [attachments]([id]), [provider_metadata] TEXT);

INSERT INTO conversations VALUES ('01k0conv0000000000000000001', 'What time is it', 'claude-sonnet-4.5');
INSERT INTO attachments VALUES ('att-clock', 'image/png', NULL, NULL, X'89504E470D0A1A0A');

INSERT INTO messages VALUES ('msg-sys', 'system', NULL), ('msg-u1', 'user', NULL), ('msg-a1', 'assistant', NULL),
  ('msg-t1', 'tool', NULL), ('msg-a2', 'assistant', NULL);
INSERT INTO parts (message_id, [order], type, text) VALUES ('msg-sys', 0, 'text', 'Be brief.');
INSERT INTO parts (message_id, [order], type, text) VALUES ('msg-u1', 0, 'text', 'What time is it? Here is my clock.');
INSERT INTO parts (message_id, [order], type, attachment_id) VALUES ('msg-u1', 1, 'attachment', 'att-clock');
INSERT INTO parts (message_id, [order], type, text, redacted) VALUES ('msg-a1', 0, 'reasoning', 'The user wants the time: call the tool.', 0);
INSERT INTO parts (message_id, [order], type, text, redacted) VALUES ('msg-a1', 1, 'reasoning', NULL, 1);
INSERT INTO parts (message_id, [order], type, name, arguments, tool_call_id) VALUES ('msg-a1', 2, 'tool_call', 'llm_time', '{}', 'toolu_01');
INSERT INTO parts (message_id, [order], type, name, output, tool_call_id) VALUES ('msg-t1', 0, 'tool_result', 'llm_time', '{"utc_time": "2026-05-28 09:00:00 UTC"}', 'toolu_01');
INSERT INTO parts (message_id, [order], type, text) VALUES ('msg-a2', 0, 'text', 'It is 09:00 UTC.');
INSERT INTO nodes VALUES ('n1', NULL, 'msg-sys', 0), ('n2', 'n1', 'msg-u1', 1), ('n3', 'n2', 'msg-a1', 2),
  ('n4', 'n3', 'msg-t1', 3), ('n5', 'n4', 'msg-a2', 4);

INSERT INTO responses (id, model, conversation_id, input_node_id, first_input_node_id, output_node_id, prompt, system, response,
  reasoning, datetime_utc, input_tokens, output_tokens)
  VALUES ('01k0resp0000000000000000001', 'claude-sonnet-4.5', '01k0conv0000000000000000001', 'n2', 'n1', 'n3',
  'What time is it? Here is my clock.', 'Be brief.', '', 'The user wants the time: call the tool.', '2026-05-28T09:00:00.000000', 120, 30);
INSERT INTO responses (id, model, conversation_id, input_node_id, first_input_node_id, output_node_id, prompt, system, response,
  datetime_utc, input_tokens, output_tokens)
  VALUES ('01k0resp0000000000000000002', 'claude-sonnet-4.5', '01k0conv0000000000000000001', 'n4', 'n4', 'n5',
  '', 'Be brief.', 'It is 09:00 UTC.', '2026-05-28T09:00:01.000000', 160, 9);
