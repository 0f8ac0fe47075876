// audit inspects the rendered page for the ui-renders gate. It is called
// with {sections: ["hero", …]} and returns what a user would notice: an
// empty body, the planned sections' boxes, text that fails WCAG AA
// contrast against its rendered background, content wider than the
// viewport, images without alt, unnamed buttons, and the theme tokens the
// stylesheets define and the page uses.
(function (opts) {
  const out = {blank: false, text: '', viewportMeta: !!document.querySelector('meta[name="viewport"]'),
    sections: [], contrast: [], overflow: {viewport: 0, scrollWidth: 0, offenders: []},
    imgNoAlt: [], buttonNoName: [], tokensDefined: [], tokensUsed: []};
  const body = document.body;
  if (!body) { out.blank = true; return out; }
  const style = (el) => getComputedStyle(el);
  const visible = (el) => {
    const s = style(el);
    if (s.display === 'none' || s.visibility === 'hidden' || Number(s.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const describe = (el) => {
    let d = el.tagName.toLowerCase();
    if (el.id) d += '#' + el.id;
    const cls = (el.getAttribute('class') || '').trim().split(/\s+/).filter(Boolean).slice(0, 3);
    if (cls.length) d += '.' + cls.join('.');
    if (el.dataset && el.dataset.section) return `${d}[data-section="${el.dataset.section}"]`;
    const sec = el.closest('[data-section]');
    if (sec) d = `[data-section="${sec.dataset.section}"] ${d}`;
    return d;
  };

  const text = (body.innerText || '').trim();
  const media = [...body.querySelectorAll('img,svg,canvas,video,picture,iframe,object')].some(visible);
  out.blank = text === '' && !media;
  out.text = text.slice(0, 200);

  for (const name of opts.sections || []) {
    const el = document.querySelector(`[data-section="${CSS.escape(name)}"]`);
    if (!el) { out.sections.push({name, found: false, width: 0, height: 0}); continue; }
    const r = el.getBoundingClientRect();
    out.sections.push({name, found: true, width: r.width, height: r.height, el: describe(el)});
  }

  // Colours: a 1×1 canvas turns any CSS colour (oklch, color-mix, …) into sRGB.
  const cv = document.createElement('canvas');
  cv.width = cv.height = 1;
  const cx = cv.getContext('2d', {willReadFrequently: true});
  const seen = new Map();
  const rgba = (c) => {
    if (seen.has(c)) return seen.get(c);
    cx.clearRect(0, 0, 1, 1);
    cx.fillStyle = '#000';
    cx.fillStyle = c;
    cx.fillRect(0, 0, 1, 1);
    const d = cx.getImageData(0, 0, 1, 1).data;
    const v = [d[0], d[1], d[2], d[3] / 255];
    seen.set(c, v);
    return v;
  };
  const over = (top, under) => [0, 1, 2].map((k) => top[k] * top[3] + under[k] * (1 - top[3]));
  // The background behind el: its and its ancestors' background colours
  // composited over white; null under a background image (unknown).
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const s = style(e);
      if (s.backgroundImage && s.backgroundImage !== 'none') return null;
      const c = rgba(s.backgroundColor);
      if (c[3] > 0) {
        layers.push(c);
        if (c[3] >= 1) break;
      }
    }
    let bg = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const hex = (c) => '#' + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  const reported = new Set();
  for (const el of body.querySelectorAll('*')) {
    if (out.contrast.length >= 12) break;
    if (el.closest('svg,script,style,noscript,template')) continue;
    const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
    if (!own || !visible(el)) continue;
    const s = style(el);
    const bg = background(el);
    if (!bg) continue;
    const fg = over(rgba(s.color), bg);
    const px = parseFloat(s.fontSize);
    const large = px >= 24 || (px >= 18.66 && Number(s.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    const r = ratio(fg, bg);
    if (r + 1e-9 >= need) continue;
    const key = hex(fg) + hex(bg) + need;
    if (reported.has(key)) continue;
    reported.add(key);
    out.contrast.push({el: describe(el), text: own.replace(/\s+/g, ' ').slice(0, 60), fg: hex(fg), bg: hex(bg),
      ratio: Math.floor(r * 100) / 100, need, large, fontSize: px});
  }

  const root = document.documentElement;
  const vw = root.clientWidth;
  out.overflow.viewport = vw;
  out.overflow.scrollWidth = Math.max(root.scrollWidth, body.scrollWidth);
  if (out.overflow.scrollWidth > vw + 1) {
    const clipped = (el) => {
      for (let e = el.parentElement; e && e !== body; e = e.parentElement) {
        if (style(e).overflowX !== 'visible') return true;
      }
      return false;
    };
    for (const el of body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.right <= vw + 1 || r.width === 0) continue;
      const p = el.parentElement;
      if (p && p !== body && p.getBoundingClientRect().right > vw + 1) continue;
      if (clipped(el)) continue;
      out.overflow.offenders.push({el: describe(el), width: Math.round(r.width), right: Math.round(r.right)});
      if (out.overflow.offenders.length >= 5) break;
    }
  }

  for (const img of body.querySelectorAll('img:not([alt])')) {
    if (out.imgNoAlt.length < 10 && visible(img)) out.imgNoAlt.push({el: describe(img), src: (img.getAttribute('src') || '').slice(0, 80)});
  }
  for (const b of body.querySelectorAll('button,[role="button"]')) {
    if (out.buttonNoName.length >= 10 || !visible(b)) continue;
    let name = b.getAttribute('aria-label') || b.getAttribute('title') || (b.innerText || '').trim();
    const by = b.getAttribute('aria-labelledby');
    if (!name && by) name = by.split(/\s+/).map((id) => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
    if (!name) name = [...b.querySelectorAll('img[alt]')].map((i) => i.alt).join(' ').trim();
    if (!name) out.buttonNoName.push({el: describe(b)});
  }

  // Theme tokens: custom properties defined on :root or .dark, and those a
  // rule, an inline style or a utility class (bg-primary, text-muted-foreground) uses.
  const defined = new Set(), used = new Set();
  const rules = (list) => {
    for (const r of list) {
      if (r.cssRules) rules(r.cssRules);
      if (!r.style) continue;
      if (/(^|,)\s*(:root|\.dark|html)\b/.test(r.selectorText || '')) {
        for (const p of r.style) if (p.startsWith('--')) defined.add(p.slice(2));
      }
      for (const m of r.cssText.matchAll(/var\(\s*--([\w-]+)/g)) used.add(m[1]);
    }
  };
  for (const sheet of document.styleSheets) {
    try { rules(sheet.cssRules); } catch (e) { /* another origin's sheet */ }
  }
  for (const el of body.querySelectorAll('[style]')) {
    for (const m of el.getAttribute('style').matchAll(/var\(\s*--([\w-]+)/g)) used.add(m[1]);
  }
  const classes = new Set();
  for (const el of body.querySelectorAll('[class]')) for (const c of el.classList) classes.add(c.replace(/\/\d+$/, '').split(':').pop());
  for (const t of defined) {
    for (const c of classes) if (c.endsWith('-' + t)) { used.add(t); break; }
  }
  out.tokensDefined = [...defined];
  out.tokensUsed = [...used];
  return out;
})
