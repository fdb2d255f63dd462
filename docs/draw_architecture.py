"""Draws docs/_static/architecture.svg (plain SVG, no script, no web font): python docs/draw_architecture.py."""
from pathlib import Path
from xml.sax.saxutils import escape
W = 960
out = []
def box(x, y, w, h, lines, fill='#eef3fb', stroke='#4a6fa5', bold_first=True, size=13):
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{stroke}" stroke-width="1.2"/>')
    n = len(lines)
    lh = size + 4
    y0 = y + h / 2 - (n - 1) * lh / 2 + size * 0.35
    for i, line in enumerate(lines):
        weight = ' font-weight="600"' if bold_first and i == 0 else ''
        fs = size if i == 0 else size - 1.5
        out.append(f'<text x="{x + w / 2}" y="{y0 + i * lh:.1f}" text-anchor="middle" font-size="{fs}"{weight}>{escape(line)}</text>')
def arrow(x1, y1, x2, y2):
    out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#555" stroke-width="1.3" marker-end="url(#a)"/>')
def label(x, y, text, size=12, anchor='start', color='#333', style=''):
    out.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{color}"{style}>{escape(text)}</text>')

M = 10
# Row 1: entry points
top = [('vLLM', 'lmparse.integrations.vllm'), ('SGLang', 'lmparse.integrations.sglang'),
       ('LMDeploy drop-in', 'lmparse.compat.lmdeploy'), ('CLI, replay server', 'lmparse.cli, lmparse.server'),
       ('your code', 'with_parsers(...)')]
bw = (W - 2 * M - 4 * 12) / 5
xs = [M + i * (bw + 12) for i in range(5)]
for x, (a, b) in zip(xs, top):
    box(x, 30, bw, 52, [a, b], fill='#f5f5f5', stroke='#888')
label(M, 20, 'entry points: the engine or caller hands over decoded text chunks (and token ids)', 12, color='#555')
# Row 2: wire adapters under the cli (and optional for your code)
wx = xs[3]; ww = W - M - 44 - xs[3]
box(wx, 112, ww, 52, ['ChatRunner + wire adapters (optional)', 'OpenAI chat.completion(.chunk), Anthropic Messages'], fill='#f3efe6', stroke='#a58a4a')
arrow(xs[3] + bw / 2, 82, xs[3] + bw / 2, 112)
arrow(W - M - 22, 82, W - M - 22, 194)
label(M, 140, 'engine plugins return the engine\u2019s own delta types', 12, color='#555')
# Row 3: registry + router
ry = 194; rh = 64
box(M, ry, 210, rh, ['registry, lmparse which', 'name \u2192 class, model \u2192 names'], fill='#f5f5f5', stroke='#888')
rx = M + 210 + 16
box(rx, ry, W - M - rx, rh, ['BaseResponseParser  (lmparse.response, compiled router)',
    'plain / reasoning / tool modes; owns the only buffer; holds back partial tags;',
    'final=True releases held text and closes open blocks'], size=13)
arrow(M + 210, ry + rh / 2, rx, ry + rh / 2)
for i in range(3):
    arrow(xs[i] + bw / 2, 82, xs[i] + bw / 2 if xs[i] + bw / 2 > rx else rx + 20, ry)
arrow(xs[3] + bw / 2, 164, xs[3] + bw / 2, ry)
# Row 4: halves
hy = 290; hh = 56
box(M, hy, 300, hh, ['ReasoningParser  (lmparse.reasoning)', 'a descriptor: tags, switches, initial mode'])
box(M + 316, hy, W - 2 * M - 316, hh, ['ToolParser  (lmparse.tools.base)',
    'one tool block: identity first, name filtering, contiguous indices, deltas'])
arrow(rx + 40, ry + rh, rx + 40, hy)
arrow(M + 316 + (W - 2 * M - 316) / 2, ry + rh, M + 316 + (W - 2 * M - 316) / 2, hy)
# Row 5: families
fy = 380; fh = 136
out.append(f'<rect x="{M}" y="{fy}" width="{W - 2 * M}" height="{fh}" rx="6" fill="#e8f4ec" stroke="#4a8a5f" stroke-width="1.2"/>')
label(M + 10, fy + 18, 'compiled families (Cython): each scans one grammar, linear in the text', 13, style=' font-weight="600"')
fams = ['JsonToolParser', 'XmlToolParser', 'DsmlToolParser', 'SectionToolParser', 'JsonHeaderToolParser',
        'NsElementToolParser', 'BraceCallToolParser', 'PythonicToolParser', 'HarmonyResponseParser', 'ChannelToolParser']
subs = ['JSON envelopes', 'function-first XML', 'invoke / parameter', 'special-token sections', 'NAME[ARGS]{json}',
        'namespaced elements', 'call:NAME{k:v}', '[f(a=1), g()]', 'Harmony: its own router', 'whole-response channels']
fw = (W - 2 * M - 20 - 4 * 10) / 5
for i, (f, s) in enumerate(zip(fams, subs)):
    x = M + 10 + (i % 5) * (fw + 10)
    y = fy + 28 + (i // 5) * 48
    box(x, y, fw, 40, [f, s], fill='#ffffff', stroke='#4a8a5f', size=12)
arrow(M + 316 + (W - 2 * M - 316) / 2, hy + hh, M + 316 + (W - 2 * M - 316) / 2, fy)
arrow(M + 150, hy + hh, M + 150, fy)
# Row 6: dialects
dy = fy + fh + 30
box(M, dy, W - 2 * M, 52, ['dialects  (lmparse/dialects/<model family>.py, plain Python)',
    'declarations on a family: markers, fields, request switches, the public source of the syntax; registered by name'],
    fill='#fbeeee', stroke='#a54a4a')
arrow(W / 2, dy, W / 2, fy + fh)
label(W / 2 + 8, dy - 10, 'declare', 12, color='#555')
H = dy + 52 + M
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
       'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" role="img" '
       'aria-label="lmparse layers: entry points, wire adapters, router, reasoning and tool halves, compiled families, dialects">',
       '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
       '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
       f'<rect width="{W}" height="{H}" fill="#ffffff"/>'] + out + ['</svg>']
(Path(__file__).resolve().parent / '_static' / 'architecture.svg').open('w', encoding='utf-8').write('\n'.join(svg) + '\n')
