/**
 * The Grafana dashboard (deploy/grafana/dashboards/harvest.json) charts metrics the worker really
 * exports: every metric named in a panel's query is one HarvestMetrics registers (a renamed metric
 * breaks this test, not a chart nobody looks at), and the panels use the provisioned data source.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HarvestMetrics } from '../../src/jobs/metrics.ts';

const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/harvest.json', 'utf8')) as {
  uid: string;
  panels: Array<{ type: string; title: string; datasource?: { uid: string }; targets?: Array<{ expr: string }> }>;
};
const datasource = readFileSync('deploy/grafana/provisioning/datasources/prometheus.yml', 'utf8');

describe('Grafana dashboard', () => {
  it('queries only metrics the worker exports, through the provisioned data source', async () => {
    const metrics = new HarvestMetrics();
    const text = await metrics.metricsText();
    // Series names in the exposition (histograms add _bucket, _sum, _count).
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!])));
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(10);
    const uid = /uid:\s*(\S+)/.exec(datasource)?.[1];
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe(uid);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) {
        const names = [...t.expr.matchAll(/\b((?:harvest|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!);
        expect(names.length, t.expr).toBeGreaterThan(0);
        for (const name of names) expect(exported, `${p.title}: ${name}`).toContain(name);
      }
    }
    // Every harvest_ metric the worker exports has a panel.
    const charted = new Set(panels.flatMap((p) => (p.targets ?? []).flatMap((t) => [...t.expr.matchAll(/\b(harvest_[a-z0-9_]+?)(?:_bucket)?\b/g)].map((m) => m[1]!))));
    for (const name of [...exported].filter((n) => n.startsWith('harvest_') && !/_(sum|count|bucket)$/.test(n))) expect(charted, name).toContain(name);
  });
});
