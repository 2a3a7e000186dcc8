/**
 * Questions the model asks the visitor (a `question` answer of the chat
 * protocol, from a tool such as the built-in `clarification` plugin): read
 * them, show them as a card, and collect the answers.
 *
 * The card is built here with createElement and textContent (never HTML from
 * the server): single choice → radio buttons, multiple → checkboxes, text →
 * a field; defaults preselected; required questions marked and enforced
 * before anything is sent; one Send button. It is a <form>, so Enter in a
 * field sends, and it stops its own submit event: the chat's form listener
 * never sees it. The server checks the answers again against the model's
 * call (a bad answer is a 400), so this is for the visitor's comfort, not a
 * guard.
 *
 * @module question
 */

const KINDS = new Set(['single', 'multiple', 'text']);
const ID_RE = /^[A-Za-z0-9_.-]{1,64}$/;

let cards = 0; /* ids for labels, unique on the page */

/**
 * @typedef {object} Question
 * @property {string} id
 * @property {string} text
 * @property {'single'|'multiple'|'text'} kind
 * @property {string[]} options   [] for text
 * @property {boolean} required
 * @property {string|string[]|undefined} default
 */

/**
 * The `question` of a question answer, checked: {id, tool, questions}, or
 * null when the chat cannot use it.
 * @param {any} q
 * @returns {{id: string, tool: string, questions: Question[]}|null}
 */
export function readQuestion(q) {
  if (!q || typeof q !== 'object' || typeof q.id !== 'string' || !q.id) return null;
  if (!Array.isArray(q.questions) || q.questions.length === 0) return null;
  const seen = new Set();
  const questions = [];
  for (const one of q.questions) {
    if (!one || typeof one !== 'object') return null;
    const { id, text, kind } = one;
    if (typeof id !== 'string' || !ID_RE.test(id) || seen.has(id)) return null;
    if (typeof text !== 'string' || !text.trim() || !KINDS.has(kind)) return null;
    const options = kind === 'text' ? [] : one.options;
    if (!Array.isArray(options) || options.some((o) => typeof o !== 'string')) return null;
    if (kind !== 'text' && options.length === 0) return null;
    seen.add(id);
    questions.push({ id, text, kind, options, required: one.required !== false, default: one.default });
  }
  return { id: q.id, tool: typeof q.tool === 'string' ? q.tool : '', questions };
}

/**
 * The answers a card's form holds: {questionId: value}, with a string for
 * single and text, an array for multiple; unanswered optional questions left
 * out. `missing` names the required ones left unanswered.
 * @param {HTMLFormElement} form
 * @param {Question[]} questions
 * @returns {{answers: Record<string, string|string[]>, missing: Question[]}}
 */
export function collectAnswers(form, questions) {
  /** @type {Record<string, string|string[]>} */
  const answers = {};
  const missing = [];
  questions.forEach((q, i) => {
    const inputs = [...form.querySelectorAll(`[data-question="${i}"]`)];
    let value;
    if (q.kind === 'text') {
      const v = String(inputs[0]?.value ?? '');
      value = v.trim() ? v : undefined;
    } else if (q.kind === 'single') {
      const picked = inputs.find((el) => el.checked);
      value = picked ? q.options[Number(picked.value)] : undefined;
    } else {
      const picked = inputs.filter((el) => el.checked).map((el) => q.options[Number(el.value)]);
      value = picked.length ? picked : undefined;
    }
    if (value !== undefined) answers[q.id] = value;
    else if (q.required) missing.push(q);
  });
  return { answers, missing };
}

/**
 * The answers in words, for the conversation: "Which size? L · Any extras? card".
 * @param {Question[]} questions
 * @param {Record<string, string|string[]>} answers
 */
export function describeAnswers(questions, answers) {
  const parts = [];
  for (const q of questions) {
    const v = answers[q.id];
    if (v === undefined) continue;
    parts.push(`${q.text} ${Array.isArray(v) ? v.join(', ') : v}`);
  }
  return parts.length ? parts.join(' · ') : 'No answers given';
}

/**
 * Build the card for `question`. `onAnswer(answers)` is called when the
 * visitor sends it with every required question answered.
 * @param {Document} doc
 * @param {{id: string, questions: Question[]}} question
 * @param {(answers: Record<string, string|string[]>) => void} onAnswer
 * @returns {HTMLFormElement}
 */
export function buildQuestionCard(doc, question, onAnswer) {
  const n = ++cards;
  const el = (tag, cls, text) => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const form = /** @type {HTMLFormElement} */ (el('form', 'gemini-chat__question'));
  form.noValidate = true; /* required is checked here, with our words */
  form.setAttribute('aria-label', 'Questions from the assistant');
  form.setAttribute('data-call', question.id);
  form.append(el('p', 'gemini-chat__question-title', 'The assistant asks'));
  question.questions.forEach((q, i) => {
    const base = `gemini-chat-q${n}-${i}`;
    const def = q.default;
    const mark = q.required ? ' *' : ' (optional)';
    if (q.kind === 'text') {
      const wrap = el('div', 'gemini-chat__question-item');
      const label = el('label', 'gemini-chat__question-text', q.text + mark);
      label.htmlFor = base;
      const field = /** @type {HTMLTextAreaElement} */ (el('textarea', 'gemini-chat__question-field'));
      field.id = base;
      field.rows = 2;
      field.setAttribute('data-question', String(i));
      if (q.required) field.setAttribute('aria-required', 'true');
      if (typeof def === 'string') field.value = def;
      /* Enter sends the card, Shift+Enter adds a line, as in the chat's input */
      field.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
          ev.preventDefault();
          form.requestSubmit ? form.requestSubmit() : form.dispatchEvent(new doc.defaultView.Event('submit', { cancelable: true }));
        }
      });
      wrap.append(label, field);
      form.append(wrap);
      return;
    }
    const set = el('fieldset', 'gemini-chat__question-item');
    set.append(el('legend', 'gemini-chat__question-text', q.text + mark));
    if (q.required && q.kind === 'single') set.setAttribute('aria-required', 'true');
    const chosen = new Set(Array.isArray(def) ? def : typeof def === 'string' ? [def] : []);
    q.options.forEach((opt, k) => {
      const label = el('label', 'gemini-chat__question-option');
      const input = /** @type {HTMLInputElement} */ (el('input'));
      input.type = q.kind === 'single' ? 'radio' : 'checkbox';
      input.name = base;
      input.value = String(k);
      input.checked = chosen.has(opt);
      input.setAttribute('data-question', String(i));
      label.append(input, el('span', '', opt));
      set.append(label);
    });
    form.append(set);
  });
  const error = el('p', 'gemini-chat__question-error');
  error.setAttribute('role', 'alert');
  error.hidden = true;
  const send = /** @type {HTMLButtonElement} */ (el('button', 'gemini-chat__btn gemini-chat__btn--approve', 'Send answers'));
  send.type = 'submit';
  const hint = el('p', 'gemini-chat__approval-hint', 'A new message instead leaves these unanswered.');
  form.append(error, send, hint);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ev.stopPropagation(); /* not the chat's message form */
    const { answers, missing } = collectAnswers(form, question.questions);
    if (missing.length) {
      error.textContent = `Please answer: ${missing.map((q) => q.text).join(' · ')}`;
      error.hidden = false;
      form.querySelector(`[data-question="${question.questions.indexOf(missing[0])}"]`)?.focus();
      return;
    }
    error.hidden = true;
    onAnswer(answers);
  });
  return form;
}

/**
 * The card's first control, where the focus goes when it is shown.
 * @param {HTMLFormElement} form
 * @returns {HTMLElement|null}
 */
export function firstControl(form) {
  return form.querySelector('input:checked, input, textarea, button');
}
