"""Driving the simulator as a reader does: its controls (sliders over a list of stops for
concurrency and context, a slider for gamma and alpha, radio buttons for the rest)."""

from __future__ import annotations

READY = "[data-simulator][data-state=ready]"

#: Set every control as a user would leave it (a slider over stops takes the stop's position),
#: then fire the events a user's change fires.
SET_CONTROLS = """s => {
  const form = document.querySelector('[data-simulator] form');
  for (const [name, value] of Object.entries(s)) {
    const el = form.elements[name];
    if (el instanceof RadioNodeList) {
      for (const radio of el) radio.checked = radio.value === String(value);
    } else if (el.dataset.stops) {
      const i = el.dataset.stops.split(',').map(Number).indexOf(Number(value));
      if (i < 0) throw new Error(name + ' has no stop ' + value);
      el.value = String(i);
    } else {
      el.value = String(value);
    }
  }
  form.dispatchEvent(new Event('input', {bubbles: true}));
  form.dispatchEvent(new Event('change', {bubbles: true}));
}"""


def set_controls(page, setting: dict, wait: bool = True) -> None:
    page.evaluate(SET_CONTROLS, setting)
    if wait:
        page.wait_for_selector(READY)  # the setting's slice of data may still be on its way


def control_value(page, name: str) -> str:
    """The value a control holds (a slider over stops: the stop, not its position)."""
    return page.evaluate(
        """name => {
        const el = document.querySelector('[data-simulator] form').elements[name];
        if (el instanceof RadioNodeList) return el.value;
        return el.dataset.stops ? el.dataset.stops.split(',')[Number(el.value)] : el.value;
        }""",
        name,
    )
