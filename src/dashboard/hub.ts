/**
 * ONE query loop per dashboard server, whatever the number of browsers: every open page
 * subscribes to a topic (`overview:<page>` or `job:<id>`), and each tick loads every topic that
 * has a subscriber once and sends the same JSON to all of them. Ten tabs on page 1 cost what one
 * costs; the loop runs only while someone watches, and a tick starts only after the previous one
 * ended (a slow database slows the page, it never piles up queries).
 */
import type { Logger } from '../logger.ts';

export type Topic = { kind: 'overview'; page: number } | { kind: 'job'; id: string };

export interface TopicLoader {
  load(topic: Topic): Promise<unknown>;
}

type Send = (json: string) => void;

export interface HubStats {
  ticks: number;
  loads: number;
  subscribers: number;
}

export function topicKey(topic: Topic): string {
  return topic.kind === 'overview' ? `overview:${topic.page}` : `job:${topic.id}`;
}

export class DashboardHub {
  readonly #loader: TopicLoader;
  readonly #intervalMs: number;
  readonly #logger: Logger | undefined;
  readonly #topics = new Map<string, { topic: Topic; subscribers: Set<Send>; last: string | null }>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #closed = false;
  #ticks = 0;
  #loads = 0;

  constructor(loader: TopicLoader, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#loader = loader;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#logger = options.logger;
  }

  /** Adds a subscriber; it gets the topic's last JSON at once when there is one. Returns unsubscribe. */
  subscribe(topic: Topic, send: Send): () => void {
    const key = topicKey(topic);
    let entry = this.#topics.get(key);
    if (!entry) {
      entry = { topic, subscribers: new Set(), last: null };
      this.#topics.set(key, entry);
    }
    entry.subscribers.add(send);
    if (entry.last !== null) send(entry.last);
    this.#schedule(entry.last === null ? 0 : this.#intervalMs);
    return () => {
      const e = this.#topics.get(key);
      if (!e) return;
      e.subscribers.delete(send);
      if (e.subscribers.size === 0) this.#topics.delete(key);
      if (this.#topics.size === 0 && this.#timer) {
        clearTimeout(this.#timer);
        this.#timer = null;
      }
    };
  }

  stats(): HubStats {
    let subscribers = 0;
    for (const e of this.#topics.values()) subscribers += e.subscribers.size;
    return { ticks: this.#ticks, loads: this.#loads, subscribers };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#topics.clear();
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#closed || this.#running) return;
    if (this.#timer) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.#tick().finally(() => {
        this.#running = null;
        if (this.#topics.size > 0) this.#schedule(this.#intervalMs);
      });
    }, delayMs);
  }

  async #tick(): Promise<void> {
    this.#ticks++;
    for (const [key, entry] of [...this.#topics]) {
      if (this.#closed) return;
      try {
        this.#loads++;
        const json = JSON.stringify(await this.#loader.load(entry.topic));
        entry.last = json;
        // A subscriber that joined during the load gets it too; one that left does not.
        for (const send of this.#topics.get(key)?.subscribers ?? []) send(json);
      } catch (error) {
        this.#logger?.warn({ err: error, topic: key }, 'dashboard load failed');
        const json = JSON.stringify({ error: 'the dashboard could not read Postgres or Redis; retrying' });
        for (const send of this.#topics.get(key)?.subscribers ?? []) send(json);
      }
    }
  }
}
