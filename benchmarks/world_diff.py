"""Where the world engine and a live sandbox app disagree, call by call: the tool for writing an app's
operation rules (category_cards/_operations/APP.yaml). Usage: python benchmarks/world_diff.py APP [SEEDS] [CALLS] [--cards]
(seeds comma-separated, default 0; calls per seed, default 60; --cards: card rules only, no per-tool rules)."""
import asyncio
import json
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import world_fidelity as wf
from cworld.engine.rules import RulesEngine
from cworld.engine.rules.spec import load_operations
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.world.build import build_world
from cworld.engine.protocol import SessionLog


app_name = sys.argv[1]; seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0]
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 60
overrides = "--cards" not in sys.argv
setup = wf.Env.load() if hasattr(wf.Env, "load") else None
from cworld.sandbox.catalog import app_by_name
app = app_by_name(app_name)
class Subj(wf.WorldSubject):
    def engine(self, seed, world=None):
        if seed not in self._engines:
            self._engines[seed] = RulesEngine(self.setup.cards, self.setup.tools, world=self.world(seed), overrides=overrides,
                operations=load_operations(Path("category_cards/_operations")), fallback=SchemaEngine(self.setup.cards, self.setup.tools))
        return self._engines[seed]
setup = wf.Env.resolve()
subj = Subj(setup, overrides=overrides)
tot = wf.Tally()
for seed in seeds:
    ep = wf.explore_live(seed, app, calls)
    rep = asyncio.run(wf.replay(subj, ep))
    t = wf.score(ep, rep); tot.add(t)
    for c, r, a in zip(ep.calls, rep.results, rep.arguments):
        lv = c.result
        if lv.is_error != r.is_error or (lv.is_error and lv.error_class != r.error_class):
            print(f"[{seed}] {c.tool.name} {json.dumps(a)[:160]}\n    live: {lv.error_class} {lv.text[:150]}\n    world: {r.error_class} {r.meta.get('rule')} {r.text[:150]}")
    skip = wf.volatile_pattern(app)
    live_ch = wf.changed_leaves(ep.initial, ep.end, skip)
    syn_end = rep.end
    # translate ids
    syn_ch = wf.changed_leaves(ep.initial, syn_end, skip)
    miss = {k: v for k, v in live_ch.items() if syn_ch.get(k) != v}
    extra = {k: v for k, v in syn_ch.items() if k not in live_ch}
    for k in list(miss)[:8]: print(f"[{seed}] MISSING {k} live={live_ch[k][:80]} syn={str(syn_ch.get(k))[:80]}")
    for k in list(extra)[:8]: print(f"[{seed}] EXTRA {k} syn={extra[k][:80]}")
print(json.dumps({k: v for k, v in tot.figures().items() if k in ("calls","verdict","error_class","r_c","unwanted","equal_end_states")}))
print(subj._engines[seeds[0]].stats)
