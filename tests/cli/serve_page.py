"""Drives tfm serve's web page (cli/serve/page.html) in headless Chromium through Selenium, as a user
would: for tests/cli/test_serve_page.sh. Debian's packages only (python3-selenium, chromium,
chromium-driver); run with Debian's /usr/bin/python3.

usage: serve_page.py URL KEY SCREENSHOT.png SENTENCE PROMPT SEED MAX_TOKENS SENT_A SENT_B

The server has an API key (KEY): the page first lists only the translation pairs (from /languages,
which needs no key) and asks for the key; the key is typed; then the page translates SENTENCE
(en->es), completes PROMPT (model lm, streamed, temperature 0.8, the seed and max_tokens given),
compares SENT_A and SENT_B (model bert_tiny) and shows, as text, an error message that holds HTML.
Prints one JSON object: what the page showed. Exits 2 when a step times out (the message says which).
"""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

url, key, shot, sentence, prompt, seed, max_tokens, sent_a, sent_b = sys.argv[1:10]

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1100,620",
          "--no-first-run", "--disable-extensions", "--disable-background-networking"):
    opts.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
driver.set_page_load_timeout(20)
out = {}
step = "start"


def wait_for(what, cond, seconds=20):
    global step
    step = what
    return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: cond(d))


def state():
    return driver.execute_script("return document.body.dataset.state || ''")


def options():
    return [o.get_attribute("value") for o in Select(driver.find_element(By.ID, "model")).options]


def text_of(id_):
    """The element's text as the page holds it (textContent: no whitespace trimmed)."""
    return driver.execute_script("return document.getElementById(arguments[0]).textContent", id_)


def run(choice, text, text2=None, extra=None):
    """Picks `choice` in the model list, types the text(s), clicks the button, waits for the page to
    finish; returns (state, status line)."""
    Select(driver.find_element(By.ID, "model")).select_by_value(choice)
    src = driver.find_element(By.ID, "src")
    src.clear()
    src.send_keys(text)
    if text2 is not None:
        src2 = driver.find_element(By.ID, "src2")
        src2.clear()
        src2.send_keys(text2)
    for field, value in (extra or {}).items():
        e = driver.find_element(By.ID, field)
        e.clear()
        e.send_keys(value)
    driver.execute_script("document.body.dataset.state = 'clicked'")
    driver.find_element(By.ID, "go").click()
    wait_for(choice + ": the page to finish", lambda d: state() in ("done", "error"), 30)
    return state(), text_of("status")


try:
    driver.get(url)
    wait_for("the model list", lambda d: state() == "ready")
    out["options_without_key"] = options()
    out["status_without_key"] = text_of("status")
    driver.find_element(By.ID, "key").send_keys(key + Keys.TAB)  # the change event reloads the list
    wait_for("the list with the key", lambda d: "complete:lm" in options())
    out["options"] = options()

    out["complete_state"], out["complete_status"] = run(
        "complete:lm", prompt, extra={"max-tokens": max_tokens, "temperature": "0.8", "seed": seed})
    out["completion"] = text_of("completion")

    out["embed_state"], out["embed_status"] = run("embed:bert_tiny", sent_a, sent_b)
    out["similarity"] = text_of("similarity")

    # an error whose message holds HTML (the server echoes an unknown source language) is shown as text
    driver.execute_script(
        "choices.set('x', {route: '/translate', source: '<img src=x onerror=window.pwned=1>', target: 'es',"
        " label: 'x'}); document.getElementById('model').add(new Option('x', 'x'));")
    out["xss_state"], out["xss_status"] = run("x", "hello")
    out["xss_pwned"] = driver.execute_script("return window.pwned === 1 || document.querySelectorAll('img').length > 0")

    driver.execute_script("document.getElementById('model').remove(document.getElementById('model').length - 1)")
    out["translate_state"], out["translate_status"] = run("translate:en:es", sentence)
    out["translation"] = text_of("out")
    driver.save_screenshot(shot)
except TimeoutException:
    print(json.dumps(out))
    print("timed out waiting for " + step, file=sys.stderr)
    driver.save_screenshot(shot)
    driver.quit()
    sys.exit(2)
driver.quit()
print(json.dumps(out))
