/* Tool Result Lab: mermaid diagrams drawn in the course font where the machine has no CJK font.

   JupyterLab 4 shows a mermaid diagram as <img src="data:image/svg+xml,…">: drawn as an image, the SVG can
   run no script and reach nothing outside itself. That includes the page's web fonts, so on a machine
   without a system CJK font (a fresh Linux, a Hub container) every Chinese label is a box, although the
   SVG names the course font ("TRL Sans CJK SC", the last of JupyterLab's UI font stack, see custom.css).

   Where the page itself draws Chinese with the course font (the browser fetched it: no system CJK font
   came first), this plugin puts the font into each diagram's SVG, as a data: URL in an @font-face rule,
   before JupyterLab turns the SVG into an image. The diagram stays an image (no inline SVG in the page),
   and the font is one the page loaded: TRLSansCJKsc-Diagram.woff2 (the characters of the course's
   diagrams, tens of KB) or, for a diagram with a CJK character outside it (one a student wrote),
   TRLSansCJKsc-Page.woff2, the page font. On a machine with a system CJK font nothing changes and
   nothing is fetched. Both fonts come from tools/make_font_subset.py, served at /custom/.

   Built into built/ (committed, so installing the course needs no Node.js):
       cd jupyterlab-setup/labextension && npm install && npm run build
   then reinstall jupyterlab-setup (python -m pip install ./jupyterlab-setup). */
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import { IMermaidManager } from '@jupyterlab/mermaid';

const FAMILY = 'TRL Sans CJK SC';
const DIAGRAM_FONT = 'TRLSansCJKsc-Diagram.woff2';
const DIAGRAM_CHARS = 'TRLSansCJKsc-Diagram.txt'; // the CJK characters the diagram font holds
const PAGE_FONT = 'TRLSansCJKsc-Page.woff2';
// the characters no system font is expected to draw (tools/make_font_subset.py's CJK), as a regex and as a range
const CJK = /[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]/gu;
const CJK_RANGE = 'U+2E80-2FDF,U+3000-303F,U+3400-4DBF,U+4E00-9FFF,U+F900-FAFF,U+FF00-FFEF';
const STYLE_CLASS = 'trl-course-font';

const fetched = new Map();

/** A file of the course's /custom/ folder, fetched once: its text, or its bytes as a base64 string. */
function custom(name, as) {
  if (!fetched.has(name)) {
    const url = URLExt.join(PageConfig.getBaseUrl(), 'custom', name);
    fetched.set(name, fetch(url).then(async (reply) => {
      if (!reply.ok) {
        throw new Error(`${url}: HTTP ${reply.status}`);
      }
      if (as === 'text') {
        return reply.text();
      }
      const bytes = new Uint8Array(await reply.arrayBuffer());
      let binary = '';
      for (let i = 0; i < bytes.length; i += 0x8000) {
        binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      }
      return btoa(binary);
    }));
  }
  return fetched.get(name);
}

/** Whether the page draws with the course font: its @font-face was fetched (no system CJK font came first). */
async function courseFontInUse() {
  await document.fonts.ready;
  for (const face of document.fonts) {
    if (face.family.replace(/["']/g, '') === FAMILY && face.status !== 'unloaded') {
      return face.loaded.then(() => true, () => false);
    }
  }
  return false;
}

/** `svg` with the course font inside it, when the page uses that font; else `svg` as it is. */
async function withCourseFont(svg) {
  if (!(await courseFontInUse())) {
    return svg;
  }
  const wanted = new Set(svg.match(CJK) || []);
  if (!wanted.size) {
    return svg;
  }
  const held = new Set((await custom(DIAGRAM_CHARS, 'text')).match(CJK) || []);
  const file = [...wanted].every((c) => held.has(c)) ? DIAGRAM_FONT : PAGE_FONT;
  const font = await custom(file, 'base64');
  const style = `<style class="${STYLE_CLASS}">@font-face{font-family:"${FAMILY}";` +
    `src:url(data:font/woff2;base64,${font}) format("woff2");unicode-range:${CJK_RANGE};}</style>`;
  return firstFamily(svg).replace(/<svg\b[^>]*>/, (open) => open + style);
}

/* The course font first in every font list of the SVG (its stylesheets, style and font-family attributes).
   Its unicode-range limits it to CJK, so the rest is drawn as mermaid measured it in the page (with the
   system's font, as before). First, because Chromium draws the first text of each font size with a
   fallback font (boxes) when a web font still loading comes after system-ui in the list, and nothing
   redraws an image. */
function firstFamily(svg) {
  const first = (list, quote) =>
    /^\s*(inherit|initial|unset|revert)\s*$/.test(list) ? list : `${quote}${FAMILY}${quote},${list}`;
  const declarations = (css, quote) => css.replace(/font-family:([^;}]*)/g, (_, list) => `font-family:${first(list, quote)}`);
  return svg
    .replace(/(<style\b[^>]*>)([\s\S]*?)(<\/style>)/g, (_, open, css, close) => open + declarations(css, '"') + close)
    .replace(/\bstyle="([^"]*)"/g, (_, css) => `style="${declarations(css, "'")}"`)
    .replace(/\bfont-family="([^"]*)"/g, (_, list) => `font-family="${first(list, "'")}"`);
}

const plugin = {
  id: 'tool-result-lab-jupyterlab:mermaid-font',
  description: 'Draws mermaid diagrams in the course font where the machine has no CJK font.',
  autoStart: true,
  requires: [IMermaidManager],
  activate: (app, mermaid) => {
    // renderFigure (markdown's fenced blocks and .mmd files alike) makes each image from renderSvg's SVG
    const renderSvg = mermaid.renderSvg.bind(mermaid);
    mermaid.renderSvg = async (text) => {
      const info = await renderSvg(text);
      try {
        return { ...info, svg: await withCourseFont(info.svg) };
      } catch (error) {
        console.warn('tool-result-lab: the course font could not be put into a diagram', error);
        return info;
      }
    };
  }
};

export default plugin;
