-- 0023: every notification's text is escaped for Slack once, here; the outbox's comments say what
-- delivery order there is.
--
-- addEvent escaped `text` (`&`, `<` and `>` as entities) in TypeScript, but pauseJobForQuota
-- builds its event in SQL and quoted the job's note as it was: a note that quotes a service's
-- error message saying `<!channel>` pinged the whole channel. The escape now runs on every row
-- inserted into outbox, whichever statement writes it; writers give the text as it is (escaping
-- it before would show `&amp;lt;` in the channel). `data` is not touched: it keeps every value raw.
CREATE FUNCTION harvest_slack_text(t text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT replace(replace(replace(t, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')
$$;
COMMENT ON FUNCTION harvest_slack_text(text) IS
  'Text as Slack reads it: & < > as &amp; &lt; &gt;, so what a tweet or a service message says cannot become <!channel> or a disguised link.';

CREATE FUNCTION harvest_outbox_slack_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF jsonb_typeof(NEW.payload -> 'text') = 'string' THEN
    NEW.payload := jsonb_set(NEW.payload, '{text}', to_jsonb(harvest_slack_text(NEW.payload ->> 'text')));
  END IF;
  RETURN NEW;
END
$$;
COMMENT ON FUNCTION harvest_outbox_slack_text() IS
  'Trigger: escapes payload.text of a new outbox row for Slack (harvest_slack_text); payload.data is left as it is.';
CREATE TRIGGER outbox_slack_text BEFORE INSERT ON outbox
  FOR EACH ROW EXECUTE FUNCTION harvest_outbox_slack_text();

-- 0007 called outbox.id "delivery order". It is the order one worker tries a webhook's due events
-- in, nothing more: several workers send batches side by side, a failed event is retried after
-- later ones went out (a refused one must not hold the rest back for the day it is retried), and
-- an id is taken when the row is inserted, not when its transaction commits.
COMMENT ON COLUMN outbox.id IS
  'Row id: the order in which a worker tries a webhook''s due events (oldest first). Not a delivery order: workers send side by side, a failed event is retried after later ones, ids are taken at insert not at commit. Receivers order by "at".';
COMMENT ON COLUMN outbox.payload IS
  '{"text": Slack-compatible one-line summary, & < > escaped by the outbox_slack_text trigger (writers give it raw), "data": the event''s fields, raw}.';
COMMENT ON COLUMN outbox.created_at IS
  'When the transaction that wrote the event (and its cause) began: the body''s "at".';
