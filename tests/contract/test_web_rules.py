"""`check` on `web:` blocks, `language:` and `region:` (spec/tools.md, Reaching the web)."""

from __future__ import annotations

from foldrun.contract import Desk, check
from foldrun.contract.web_engines import BROWSE_ENGINE_LIMITS, engine_refusal

AGENT = "agents/researcher/agent.md"


def _agent(web_yaml: str, extra: str = "", files: dict[str, str] | None = None) -> dict[str, str]:
    text = f"---\nname: researcher\ntools: [web]\n{extra}web:\n{web_yaml}\n---\nPrompt.\n"
    return {AGENT: text, **(files or {})}


def _findings(files: dict[str, str], mode: str = "check"):
    return [f for f in check(Desk(files=files), mode=mode) if f.code.startswith("web.")]


def _messages(files: dict[str, str]) -> list[str]:
    return [f.message for f in _findings(files)]


def _one(files: dict[str, str]):
    (finding,) = _findings(files)
    return finding


# ------------------------------------------------------------ clean blocks


def test_the_spec_examples_are_clean():
    files = _agent(
        "  actions: [search, fetch, crawl]\n  fetch: jina\n  crawl: firecrawl\n  search:\n    name: exa\n    key: ${MY_EXA_KEY}\n"
    )
    assert _findings(files) == []


def test_the_identity_block_from_the_spec_is_clean():
    web = (
        '  browse:\n    engine: chrome\n    user_agent: "Mozilla/5.0 (Macintosh) Chrome/154.0.0.0 Safari/537.36"\n'
        '    cookies: MEDIUM_COOKIES\n    cookie_domain: .medium.com\n    device: "Pixel 7"\n    locale: en-AU\n'
        "    timezone: Australia/Sydney\n    via: browserbase\n"
        '    identities:\n      au-mobile:  { device: "Pixel 7", locale: en-AU, timezone: Australia/Sydney, proxy: PROXY_AU }\n'
        "      us-desktop: { locale: en-US, timezone: America/New_York, proxy: PROXY_US }\n"
    )
    assert _findings(_agent(web, extra="secrets: [MEDIUM_COOKIES, PROXY_AU, PROXY_US]\n")) == []


def test_the_searxng_tuning_block_from_the_spec_is_clean():
    web = (
        "  search:\n    engines: [bing, google cse, duckduckgo]\n    exclude_engines: [wikipedia]\n    safesearch: moderate\n"
        "    time_range: month\n    timeout: 5\n    plugins: [oa_doi_rewrite]\n    exclude_plugins: [tracker_url_remover]\n    doi_resolver: doi.org\n"
    )
    assert _findings(_agent(web)) == []


def test_the_what_it_may_do_block_from_the_spec_is_clean():
    web = (
        '  browse:\n    allowed_domains: [portal.example.com, "*.example-cdn.com"]\n    deny: [eval, download, upload]\n'
        "    boundaries: true\n    init: [scripts/stub-analytics.js]\n    state_key: BROWSER_STATE_KEY\n"
    )
    files = _agent(web, extra="secrets: [BROWSER_STATE_KEY]\n", files={"scripts/stub-analytics.js": "// stub\n"})
    assert _findings(files) == []


# ------------------------------------------------------------ who answers an action


def test_a_provider_named_for_an_action_it_cannot_do_names_the_ones_that_can():
    finding = _one(_agent("  crawl: jina"))
    assert finding.message == (
        "web.crawl: jina cannot crawl (it answers search and fetch); the providers that can are firecrawl, tavily "
        "— or leave web.crawl unset for foldrun's own."
    )
    assert (finding.file, finding.line, finding.level, finding.code) == (AGENT, 5, "error", "web.provider_cannot")


def test_the_long_form_name_is_checked_the_same_way():
    finding = _one(_agent("  monitor:\n    name: exa\n    key: ${EXA_API_KEY}"))
    assert finding.message == (
        "web.monitor.name: exa cannot monitor (it answers search, fetch and answer); the providers that can are parallel, firecrawl "
        "— or leave web.monitor unset for foldrun's own."
    )
    assert finding.line == 6


def test_an_unknown_provider_gets_the_closest_name():
    assert _messages(_agent("  fetch: jinna")) == [
        "web.fetch: 'jinna' is not a web provider; did you mean jina? The providers that can fetch are jina, firecrawl, exa, tavily, "
        "parallel, zyte, scrapingbee, anthropic — or leave web.fetch unset for foldrun's own."
    ]


def test_deepseek_is_refused_as_search_with_the_spec_reason():
    finding = _one(_agent("  search: deepseek"))
    assert finding.message == (
        "web.search: deepseek has no search behind it: DeepSeek's endpoint is Anthropic-shaped, so every shape check passes, "
        "and there is still no search behind it. Search with one of brave, exa, tavily, parallel, you, jina, firecrawl, perplexity, "
        "linkup, serper, serpapi, dataforseo, anthropic, zai, openrouter, openai, kimi — or leave web.search unset for foldrun's own."
    )
    assert finding.code == "web.search_not_for_sale"


def test_bing_is_refused_as_not_for_sale():
    assert _one(_agent("  search: bing")).message.startswith(
        "web.search: bing is not for sale: Bing's API retired 11 Aug 2025, and it survives only as grounding inside Microsoft's own models. Search with one of brave,"
    )


def test_google_is_refused_as_not_for_sale_pointing_at_the_serp_scrapers():
    assert _one(_agent("  search: google")).message.startswith(
        "web.search: google is not for sale: Google's Custom Search JSON API retires 1 Jan 2027, and it survives only as grounding inside "
        "Google's own models; for where a page ranks on Google use a SERP scraper (serper, serpapi, dataforseo). Search with one of brave,"
    )


def test_apify_is_a_marketplace_not_an_endpoint():
    assert _messages(_agent("  search: apify")) == [
        "web.search: apify is a marketplace, not an endpoint — reach an actor as an http tool file."
    ]


def test_a_long_form_key_that_is_a_value_is_refused_without_repeating_it():
    finding = _one(_agent("  search:\n    name: exa\n    key: exa-live-0123456789abcdef"))
    assert finding.message == (
        "web.search.key is not a reference: key: takes ${NAME}, the name of a vault secret, never a value — a credential written "
        "into the file is refused. Store it with `foldrun secrets set NAME` and write key: ${NAME}."
    )
    assert "0123456789" not in finding.message
    assert finding.code == "web.key_not_reference"


def test_a_model_providers_search_needs_that_provider_answering():
    files = _agent("  search: kimi", extra="provider: {name: anthropic}\n")
    assert _messages(files) == [
        "web.search: kimi's search runs on Moonshot, $web_search, inside its own tool loop, only while kimi is the one answering — "
        "and this agent runs on anthropic; name an API instead (brave, exa, tavily, parallel, you, jina, firecrawl, perplexity, linkup, "
        "serper, serpapi, dataforseo) or make kimi the provider."
    ]


def test_a_model_providers_search_follows_the_workspace_provider():
    files = _agent("  search: anthropic", files={"AGENTS.md": "---\nprovider: {name: anthropic}\n---\n"})
    assert _findings(files) == []
    files = _agent("  search: anthropic", files={"AGENTS.md": "---\nprovider: {name: openai}\n---\n"})
    assert [f.code for f in _findings(files)] == ["web.model_provider_mismatch"]


def test_moonshot_is_the_same_endpoint_as_kimi():
    assert _findings(_agent("  search: kimi", extra="provider: moonshot\n")) == []


def test_an_unknown_web_key_names_the_closest():
    assert _messages(_agent("  serch: exa")) == [
        "web.serch is not a web key; did you mean search? The keys are actions, search, fetch, browse, crawl, map, extract, answer, monitor."
    ]


def test_an_unknown_action_in_actions_names_the_closest():
    assert _messages(_agent("  actions: [search, fecth]")) == [
        "web.actions: 'fecth' is not an action; did you mean fetch? The eight are search, fetch, browse, crawl, map, extract, answer, monitor."
    ]


def test_a_provider_for_an_action_the_block_does_not_allow_is_a_warning():
    finding = _one(_agent("  actions: [search]\n  fetch: jina"))
    assert finding.level == "warning"
    assert finding.message == (
        "web.fetch names who answers fetch, but web.actions does not allow fetch, so it is never used; add fetch to web.actions or drop web.fetch."
    )


def test_web_blocks_in_agents_md_and_flows_are_checked_too():
    files = {
        "AGENTS.md": "---\nweb:\n  map: exa\n---\n",
        "flows/weekly.md": "---\nname: weekly\nweb: {extract: brave}\n---\n1. [[researcher]] — Go.\n",
    }
    assert sorted((f.file, f.line, f.code) for f in _findings(files)) == [
        ("AGENTS.md", 3, "web.provider_cannot"),
        ("flows/weekly.md", 3, "web.provider_cannot"),
    ]


def test_web_that_is_not_a_block_is_refused():
    assert _messages({AGENT: "---\nname: researcher\nweb: exa\n---\nPrompt.\n"}) == [
        "web must be a block naming who answers each action, e.g. web: {search: exa, fetch: jina}."
    ]


# ------------------------------------------------------------ search: the account's own engine


def test_searxng_keys_beside_a_search_api_name_are_refused():
    finding = _one(_agent("  search:\n    name: exa\n    engines: [naver]"))
    assert finding.message == (
        "web.search.engines tunes the account's own engine, and a search API would ignore it; drop it, or drop name: exa to tune the account's own engine."
    )
    assert (finding.line, finding.code) == (7, "web.search_key_beside_name")


def test_an_engine_name_not_shaped_like_one_is_refused():
    assert _messages(_agent('  search:\n    engines: ["https://google.com"]')) == [
        "web.search.engines: 'https://google.com' is not shaped like a SearXNG engine name; write it in lower case as SearXNG lists it, e.g. duckduckgo or google cse."
    ]


def test_an_engine_both_asked_for_and_excluded_is_refused():
    assert _messages(_agent("  search:\n    engines: [naver, wikipedia]\n    exclude_engines: [wikipedia]")) == [
        "web.search: wikipedia is both asked for (engines) and excluded (exclude_engines); keep it in one."
    ]


def test_a_plugin_that_does_not_exist_is_refused_with_the_closest():
    assert _messages(_agent("  search:\n    plugins: [oa_doi_rewrit]")) == [
        "web.search.plugins: 'oa_doi_rewrit' is not a SearXNG plugin; did you mean oa_doi_rewrite? The plugins are ahmia_filter, calculator, "
        "hash_plugin, hostnames, oa_doi_rewrite, self_info, time_zone, tor_check, tracker_url_remover, unit_converter."
    ]


def test_a_page_only_preference_is_refused():
    assert _messages(_agent("  search:\n    theme: simple")) == [
        "web.search.theme is a SearXNG page preference that does nothing to a JSON answer; drop it."
    ]


def test_searxng_values_out_of_range_are_refused():
    files = _agent(
        "  search:\n    safesearch: always\n    time_range: decade\n    timeout: 60\n    doi_resolver: not a host"
    )
    assert _messages(files) == [
        "web.search.safesearch must be off, moderate or strict (0, 1 or 2).",
        "web.search.time_range must be day, week, month or year.",
        "web.search.timeout must be a number of seconds from 0.5 to 30.",
        "web.search.doi_resolver must be a resolver's host name, e.g. doi.org.",
    ]


def test_safesearch_off_survives_yaml_reading_it_as_false():
    assert _findings(_agent("  search:\n    safesearch: off")) == []


def test_engines_and_categories_together_warn_that_categories_is_unused():
    finding = _one(_agent("  search:\n    engines: [naver]\n    categories: [news]"))
    assert (finding.level, finding.message) == (
        "warning",
        "web.search.categories is not used while engines is set — a named engine list beats categories; drop one.",
    )


def test_an_unknown_search_key_names_the_closest():
    assert _messages(_agent("  search:\n    engine: [naver]")) == [
        "web.search.engine is not a web.search key; did you mean engines? The keys are name and key for a search API, or engines, "
        "exclude_engines, categories, safesearch, time_range, timeout, plugins, exclude_plugins, doi_resolver for the account's own engine."
    ]


# ------------------------------------------------------------ engines


def test_an_engine_paired_with_what_it_cannot_do_is_refused_in_the_spec_words():
    finding = _one(_agent("  browse:\n    engine: lightpanda\n    video: true"))
    assert (
        finding.message
        == "web.browse: video needs a browser that renders; lightpanda reads and drives pages without drawing them — use engine chrome."
    )
    assert (finding.line, finding.code) == (7, "web.engine_capability")


def test_the_refusal_sentence_is_the_one_the_tool_uses():
    assert engine_refusal("lightpanda", "video") == (
        "video needs a browser that renders; lightpanda reads and drives pages without drawing them — use engine chrome"
    )


def test_obscura_cannot_intercept_requests():
    assert _messages(_agent("  browse:\n    engine: obscura\n    allowed_domains: [example.com]")) == [
        "web.browse: allowed_domains needs a browser that can intercept requests; obscura draws pages but cannot intercept requests, "
        "record them, emulate a device, keep a session or take a proxy — use engine chrome."
    ]


def test_live_is_chromium_only():
    assert _messages(_agent("  browse:\n    engine: firefox\n    live: true")) == [
        "web.browse: live needs Chromium; firefox is Firefox — use engine chrome."
    ]


def test_headless_false_needs_a_window():
    assert _messages(_agent("  browse:\n    engine: lightpanda\n    headless: false")) == [
        "web.browse: headless: false needs a browser that renders; lightpanda reads and drives pages without drawing them — use engine chrome."
    ]


def test_webkit_is_accepted_for_safari_and_checked_as_safari():
    assert _findings(_agent('  browse:\n    engine: webkit\n    device: "iPhone 15"')) == []
    assert _messages(_agent("  browse:\n    engine: webkit\n    webgpu: true")) == [
        "web.browse: webgpu needs Chromium; safari is WebKit, Safari's engine — use engine chrome."
    ]


def test_the_engine_table_matches_the_spec_rows():
    assert BROWSE_ENGINE_LIMITS["pdf"] == {"firefox", "safari", "lightpanda"}
    assert BROWSE_ENGINE_LIMITS["screenshot"] == {"lightpanda"}
    assert BROWSE_ENGINE_LIMITS["block"] == {"obscura"}
    assert BROWSE_ENGINE_LIMITS["cpu_profile"] == {"firefox", "safari", "lightpanda", "obscura"}
    assert BROWSE_ENGINE_LIMITS["read"] == frozenset()


def test_an_engine_that_does_not_exist_is_refused_with_the_closest():
    assert _messages(_agent("  browse:\n    engine: chromum")) == [
        "web.browse.engine: 'chromum' is not an engine; did you mean chromium? The engines are chromium (the default), chrome, firefox, "
        "safari (webkit also works), lightpanda and obscura."
    ]


def test_engine_and_browser_must_agree():
    assert _messages(_agent("  browse:\n    engine: chrome\n    browser: firefox")) == [
        "web.browse sets engine chrome and browser firefox, which disagree — they are one setting; give either, or "
        "both only if they agree."
    ]


def test_a_setting_that_is_not_text_is_refused():
    assert _messages(_agent("  browse:\n    device: 7")) == [
        'web.browse.device is not text; write it as one string, e.g. device: "Pixel 7".'
    ]


def test_an_engine_given_as_a_vendor_says_where_it_goes():
    assert _messages(_agent("  browse: chrome")) == [
        "web.browse: chrome is an engine, not a vendor; write web: {browse: {engine: chrome}}."
    ]


def test_a_vendor_that_cannot_browse_is_refused():
    assert _messages(_agent("  browse:\n    via: firecrawl")) == [
        "web.browse.via: firecrawl cannot browse (it answers search, fetch, crawl, map, extract and monitor); the providers that can are "
        "browserbase, steel, hyperbrowser, browserless, brightdata, zenrows, cdp — or leave web.browse unset for foldrun's own."
    ]


# ------------------------------------------------------------ browse block keys and values


def test_a_call_key_in_the_block_is_refused():
    assert _messages(_agent("  browse:\n    mode: aria")) == [
        "web.browse.mode belongs to a call, not to the file — what one call does stays in the call; pass mode= on the web action=browse call."
    ]


def test_an_unknown_browse_key_names_the_closest():
    assert _messages(_agent("  browse:\n    user_agnt: x")) == [
        "web.browse.user_agnt is not a web.browse key; did you mean user_agent?"
    ]


def test_cookies_must_be_a_secret_name_never_the_cookie_line():
    files = _agent('  browse:\n    cookies: "sid=abc123; uid=def"\n    cookie_domain: .medium.com')
    finding = _one(files)
    assert finding.message == (
        "web.browse.cookies must be the NAME of a vault secret (capitals, digits and underscores, like MEDIUM_COOKIES), never the value; "
        "store the value with `foldrun secrets set MEDIUM_COOKIES` and write cookies: MEDIUM_COOKIES."
    )
    assert "abc123" not in finding.message


def test_a_cookie_default_must_name_its_site():
    assert _messages(_agent("  browse:\n    cookies: MEDIUM_COOKIES", extra="secrets: [MEDIUM_COOKIES]\n")) == [
        "web.browse.cookies needs cookie_domain: beside it, the site the cookies belong to (e.g. cookie_domain: .medium.com); "
        "without it every page the agent opens would be handed that site's session."
    ]


def test_storage_needs_its_origin_and_the_origin_must_be_one():
    files = _agent("  browse:\n    storage: SITE_STORAGE", extra="secrets: [SITE_STORAGE]\n")
    assert _messages(files) == [
        "web.browse.storage needs storage_origin: beside it, the origin the storage belongs to (e.g. https://www.example.com) — storage is walled off per origin."
    ]
    files = _agent(
        "  browse:\n    storage: SITE_STORAGE\n    storage_origin: .example.com", extra="secrets: [SITE_STORAGE]\n"
    )
    assert _messages(files) == [
        "web.browse.storage_origin must be an origin, a scheme and a host such as https://www.example.com; .example.com cannot name one."
    ]


def test_a_secret_the_block_reads_must_be_declared_by_the_agent():
    finding = _one(_agent("  browse:\n    state_key: BROWSER_STATE_KEY"))
    assert (finding.level, finding.message) == (
        "warning",
        "web.browse.state_key reads the secret BROWSER_STATE_KEY, which this agent does not declare under secrets:; add it there, or the step is not given it.",
    )


def test_a_proxy_url_in_the_file_is_refused_without_repeating_it():
    finding = _one(_agent('  browse:\n    proxy: "http://user:pass@proxy.example:8080"'))
    assert finding.code == "web.secret_value"
    assert "pass@" not in finding.message


def test_locale_and_timezone_values_are_checked():
    assert _messages(_agent("  browse:\n    locale: english\n    timezone: Sydney/Australia")) == [
        "web.browse.locale: 'english' is not a locale; write a language tag such as en-AU or pt-BR.",
        "web.browse.timezone: 'Sydney/Australia' is not a time zone; write an IANA name such as Australia/Sydney.",
    ]


def test_a_cookie_header_is_refused():
    assert _messages(_agent('  browse:\n    headers: {cookie: "sid=1"}')) == [
        "web.browse.headers.cookie is refused: cookies go in cookies:, as a secret's NAME, with cookie_domain: beside it."
    ]


def test_a_credential_header_without_a_reference_is_refused():
    assert _messages(_agent('  browse:\n    headers: {Authorization: "Bearer abc"}')) == [
        "web.browse.headers.Authorization holds a credential written into the file; keep the value in the vault and write ${NAME} in its place."
    ]


def test_a_credential_header_with_a_reference_is_clean():
    files = _agent(
        '  browse:\n    headers: {Authorization: "Bearer ${PORTAL_TOKEN}"}', extra="secrets: [PORTAL_TOKEN]\n"
    )
    assert _findings(files) == []


def test_a_misspelt_denial_is_refused_because_it_would_deny_nothing():
    assert _messages(_agent("  browse:\n    deny: [eval, donwload, js]")) == [
        "web.browse.deny: 'donwload' is not an action, so denying it would deny nothing; did you mean download?"
    ]


def test_allowed_domains_are_hosts_not_urls():
    assert _messages(_agent('  browse:\n    allowed_domains: ["https://portal.example.com/login"]')) == [
        "web.browse.allowed_domains: 'https://portal.example.com/login' is not a domain; write a host such as portal.example.com "
        "or a glob such as *.example.com — no scheme, no path."
    ]


def test_init_scripts_must_be_workspace_files():
    assert _messages(_agent("  browse:\n    init: [scripts/missing.js]")) == [
        "web.browse.init: 'scripts/missing.js' is not a file in this workspace; init: takes workspace paths of scripts, e.g. scripts/stub-analytics.js."
    ]


def test_extensions_must_be_workspace_folders():
    files = _agent("  browse:\n    extensions: [extensions/blocker]", files={"extensions/blocker/manifest.json": "{}"})
    assert _findings(files) == []
    assert [f.code for f in _findings(_agent("  browse:\n    extensions: [extensions/none]"))] == ["web.workspace_path"]


def test_booleans_and_choices_are_checked():
    files = _agent("  browse:\n    headless: maybe\n    color_scheme: sepia\n    dialogs: ignore")
    assert _messages(files) == [
        "web.browse.headless must be true or false.",
        "web.browse.color_scheme must be light or dark.",
        "web.browse.dialogs must be accept or dismiss.",
    ]


def test_live_beside_video_warns_that_a_live_page_does_not_record():
    finding = _one(_agent("  browse:\n    engine: chromium\n    live: true\n    video: true"))
    assert (finding.level, finding.message) == (
        "warning",
        "web.browse.video does nothing beside live: true — a live page does not support video, har, auth or device; the call says so and carries on without it.",
    )


# ------------------------------------------------------------ identities


def test_an_identity_with_an_engine_that_does_not_exist_is_refused():
    assert _messages(_agent("  browse:\n    identities:\n      fast: {engine: edge}")) == [
        "web.browse.identities.fast.engine: 'edge' is not an engine. The engines are chromium (the default), chrome, firefox, "
        "safari (webkit also works), lightpanda and obscura."
    ]


def test_an_identity_secret_that_is_a_value_is_refused():
    finding = _one(_agent('  browse:\n    identities:\n      au: {proxy: "http://u:p@au.proxy:1"}'))
    assert finding.message == (
        "web.browse.identities.au.proxy must be the NAME of a vault secret (capitals, digits and underscores, like PROXY_AU), never the value; "
        "store the value with `foldrun secrets set PROXY_AU` and write proxy: PROXY_AU."
    )


def test_an_identity_cookie_without_its_domain_is_refused():
    files = _agent(
        "  browse:\n    identities:\n      me: {cookies: MEDIUM_COOKIES}", extra="secrets: [MEDIUM_COOKIES]\n"
    )
    assert [(f.line, f.code) for f in _findings(files)] == [(8, "web.cookie_domain_missing")]


def test_an_identity_key_that_belongs_to_a_call_is_refused():
    assert _messages(_agent("  browse:\n    identities:\n      au: {locale: en-AU, actions: []}")) == [
        "web.browse.identities.au.actions belongs to a call, not to an identity — an identity is who the browser is (engine, browser, device, "
        "locale, timezone, user_agent, proxy, headers, geolocation, color_scheme, block, cookies, cookie_domain); pass actions= on the call."
    ]


def test_an_identity_engine_paired_with_what_it_cannot_do_is_refused():
    files = _agent('  browse:\n    identities:\n      light: {engine: lightpanda, device: "Pixel 7"}')
    assert _messages(files) == [
        "web.browse.identities.light: device needs a browser that renders; lightpanda reads and drives pages without drawing them — use engine chrome."
    ]


def test_an_identity_engine_meets_the_blocks_own_capabilities():
    files = _agent("  browse:\n    video: true\n    identities:\n      light: {engine: obscura}")
    assert _messages(files) == [
        "web.browse.identities.light: video needs a browser that records what it draws; obscura draws pages but cannot intercept requests, "
        "record them, emulate a device, keep a session or take a proxy — use engine chrome."
    ]


# ------------------------------------------------------------ vendors: vendor_session and session


def test_a_vendor_session_setting_the_vendor_has_no_option_for_names_the_vendors_that_do():
    finding = _one(_agent("  browse:\n    via: zenrows\n    vendor_session:\n      captcha: true"))
    assert finding.message == (
        "web.browse.vendor_session.captcha: zenrows has no option for it; the vendors that do are browserbase, steel, hyperbrowser, browserless, brightdata."
    )
    assert (finding.line, finding.code) == (8, "web.vendor_session_unsupported")


def test_a_proxy_state_names_the_vendors_that_take_one():
    assert _messages(
        _agent("  browse:\n    via: browserless\n    vendor_session:\n      proxy: {country: AU, state: NSW}")
    ) == [
        "web.browse.vendor_session.proxy.state: browserless has no option for it; the vendors that do are browserbase, steel, hyperbrowser."
    ]


def test_the_spec_vendor_session_example_is_clean_on_browserbase():
    web = (
        "  browse:\n    via: browserbase\n    vendor_session:\n      proxy: { country: AU, city: Sydney }\n      captcha: true\n"
        "      stealth: true\n      region: ap-southeast-1\n      timeout: 30m\n      keep: client-portal\n      record: false\n"
        "      block: [ads]\n      options: { browserSettings: { viewport: { width: 1440, height: 900 } } }\n"
    )
    assert _findings(_agent(web)) == []


def test_a_region_and_timeout_the_vendor_does_not_offer_are_refused():
    files = _agent("  browse:\n    via: browserbase\n    vendor_session:\n      region: mars-1\n      timeout: 9h")
    assert _messages(files) == [
        "web.browse.vendor_session.region: 'mars-1' is not a browserbase region; its regions are us-west-2, us-east-1, eu-central-1, ap-southeast-1.",
        "web.browse.vendor_session.timeout: browserbase takes 60s–6h.",
    ]


def test_block_words_the_vendor_cannot_block_are_refused():
    assert _messages(_agent("  browse:\n    via: steel\n    vendor_session:\n      block: [ads, trackers]")) == [
        "web.browse.vendor_session.block: steel has no option to block trackers; the vendors that do are hyperbrowser."
    ]


def test_keep_refuses_identity_settings_beside_it():
    assert _messages(
        _agent("  browse:\n    via: steel\n    locale: en-AU\n    vendor_session:\n      keep: portal")
    ) == [
        "web.browse.locale is refused beside web.browse.vendor_session.keep — steel's kept profile is the vendor's own browser context as it stands."
    ]


def test_zenrows_refuses_a_changed_user_agent_or_device():
    assert _messages(_agent('  browse:\n    via: zenrows\n    device: "Pixel 7"')) == [
        "web.browse.device is refused beside via: zenrows — ZenRows' browser refuses a changed user agent or device."
    ]


def test_vendor_session_without_a_vendor_is_refused():
    assert _messages(_agent("  browse:\n    vendor_session: {captcha: true}")) == [
        "web.browse.vendor_session asks a vendor's browser for its options, but no vendor is named; add via: browserbase, steel, "
        "hyperbrowser, browserless, brightdata or zenrows beside it."
    ]


def test_the_old_session_name_warns_with_the_new_one():
    finding = _one(_agent("  browse:\n    via: browserbase\n    session: {captcha: true}"))
    assert (finding.level, finding.message) == (
        "warning",
        "web.browse.session: is now called vendor_session: (renamed 2026-10-01, because a call's session= is a named saved login, a different thing); rename it.",
    )


def test_a_file_that_writes_both_session_and_vendor_session_is_refused():
    files = _agent("  browse:\n    via: browserbase\n    session: {captcha: true}\n    vendor_session: {captcha: true}")
    assert _messages(files) == [
        "web.browse writes both session: and vendor_session:; session: is the old name of vendor_session: — keep vendor_session: alone."
    ]


def test_proxy_and_block_do_not_reach_a_vendors_browser():
    finding = _one(_agent('  browse:\n    via: hyperbrowser\n    block: "image,font"'))
    assert (finding.level, finding.message) == (
        "warning",
        "web.browse.block does not reach hyperbrowser's browser — it is a launch option, and the vendor launched it; "
        "ask the vendor's session for it (vendor_session: {block: …}).",
    )


def test_vendor_session_proxy_own_must_be_a_secret_name():
    finding = _one(_agent('  browse:\n    via: steel\n    vendor_session:\n      proxy: {own: "http://u:p@x:1"}'))
    assert finding.code == "web.secret_value"
    assert "u:p@" not in finding.message


# ------------------------------------------------------------ language and region


def test_language_must_be_a_tag_and_region_a_country_code():
    files = {AGENT: "---\nname: researcher\nlanguage: English\nregion: australia\n---\nPrompt.\n"}
    assert [(f.line, f.message) for f in _findings(files)] == [
        (3, "language: 'English' is not a language tag; write one such as en, en-AU or pt-BR."),
        (4, "region: 'australia' is not a country code; write a two-letter one such as au or us."),
    ]


def test_the_rank_desk_language_and_region_are_clean():
    assert _findings({"AGENTS.md": "---\nlanguage: en-AU\nregion: au\ntimezone: Australia/Sydney\n---\n"}) == []


def test_deploy_refuses_the_same_pairs():
    findings = _findings(_agent("  browse:\n    engine: lightpanda\n    video: true"), mode="deploy")
    assert [(f.level, f.code) for f in findings] == [("error", "web.engine_capability")]


def test_a_vendor_written_as_name_in_the_browse_block_is_pointed_at_via():
    assert _messages(_agent("  browse:\n    name: browserbase")) == [
        "web.browse.name is not a web.browse key; did you mean via?"
    ]


def test_an_identity_that_overrides_the_engine_is_checked_with_its_own_engine_only():
    files = _agent(
        '  browse:\n    engine: lightpanda\n    identities:\n      phone: {engine: chrome, device: "Pixel 7"}'
    )
    assert _findings(files) == []


# ------------------------------------------------------------ the tables in code against the tables in the spec

import re  # noqa: E402

from foldrun.contract import web_engines as W  # noqa: E402
from tests.conftest import spec_file  # noqa: E402


def _table_after(header: str) -> list[list[str]]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = spec_file("tools.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_engine_limits_table_matches_the_spec_cell_for_cell():
    rows = _table_after("| | `chromium` | `chrome` |")
    engines = ["chromium", "chrome", "firefox", "safari", "lightpanda", "obscura"]
    from_spec = {}
    for row in rows[1:]:  # the first row says what each engine is
        lacking = frozenset(e for e, cell in zip(engines, row[1:]) if cell.startswith("—"))
        for capability in row[0].split(", "):
            quoted = re.search(r"`([^`]+)`", capability)
            from_spec[quoted.group(1) if quoted else capability] = lacking
    assert from_spec == W.BROWSE_ENGINE_LIMITS


def test_the_action_providers_table_matches_the_spec():
    rows = _table_after("| action | providers |")
    from_spec = {}
    for action, providers in rows:
        names = providers.split(" — ")[0]
        from_spec[action.strip("`")] = tuple(re.sub(r"\s*\(.*?\)", "", n).strip() for n in names.split(","))
    assert from_spec == W.ACTION_PROVIDERS


def test_the_vendor_session_table_matches_the_spec():
    rows = _table_after("| `vendor_session:` | browserbase |")
    vendors = ["browserbase", "steel", "hyperbrowser", "browserless", "brightdata", "zenrows"]
    from_spec: dict[str, dict[str, bool]] = {}
    for row in rows:
        if row[0].startswith("`proxy.country`"):
            for index, part in enumerate(("country", "state", "city")):
                from_spec[f"proxy.{part}"] = {v: cell.split()[index] == "✓" for v, cell in zip(vendors, row[1:])}
            continue
        setting = row[0].strip("`").split(":")[0]
        from_spec[setting] = {v: not cell.startswith("—") for v, cell in zip(vendors, row[1:])}
    in_code = {s: {v: f is not None for v, f in by_vendor.items()} for s, by_vendor in W.VENDOR_SESSION_OPTIONS.items()}
    assert from_spec == in_code


def test_the_vendor_session_block_region_and_timeout_cells_match_the_spec():
    rows = _table_after("| `vendor_session:` | browserbase |")
    vendors = ["browserbase", "steel", "hyperbrowser", "browserless", "brightdata", "zenrows"]
    cells = {row[0].strip("`"): dict(zip(vendors, row[1:])) for row in rows}
    assert {v: tuple(c.split(" · ")) for v, c in cells["block"].items() if c != "—"} == W.VENDOR_BLOCK
    assert {v: tuple(c.split(" · ")) for v, c in cells["region"].items() if c != "—"} == W.VENDOR_REGIONS
    ranges = {v: c for v, c in cells["timeout"].items() if re.fullmatch(r"\d+[smh]–\d+[smh]", c)}
    assert ranges == W.VENDOR_TIMEOUT_LABELS
    assert {
        v: tuple(int(W.parse_duration(end)) for end in c.split("–")) for v, c in ranges.items()
    } == W.VENDOR_TIMEOUTS


def test_a_web_block_on_an_agent_not_granted_web_is_a_warning():
    files = {AGENT: "---\nname: researcher\ntools: [read]\nweb:\n  fetch: jina\n---\nPrompt.\n"}
    finding = _one(files)
    assert (finding.level, finding.line, finding.message) == (
        "warning",
        4,
        "web: is set, but this agent is not granted the web tool, so the block does nothing; add web to tools: or drop web:.",
    )


# ------------------------------------------------------------ a pinned user agent

UA_99 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.0.0 Safari/537.36"


def _pinned(engine: str = "", identity: str = "", ua: str = UA_99) -> dict[str, str]:
    engine_line = f"    engine: {engine}\n" if engine else ""
    return _agent(f'  browse:\n{engine_line}    user_agent: "{ua}"\n{identity}')


def _stale(files: dict[str, str], platform: dict | None, mode: str = "check") -> list[str]:
    return [
        f.format() for f in check(Desk(files=files), mode=mode, platform=platform) if f.code == "web.user_agent_stale"
    ]


def test_a_pinned_user_agent_of_another_chrome_major_than_chromium_warns_at_its_line():
    assert _stale(_pinned(), {"chromium_major": 156}) == [
        f"{AGENT}:6: warning: web.browse.user_agent claims Chrome 99, but the browser that sends it is Chromium 156; a "
        "site sees the mismatch beside the client hints and the JavaScript engine, which say 156 — drop the pin so the "
        "user agent follows the browser, or raise it to Chrome/156."
    ]


def test_it_is_a_warning_on_deploy_too():
    assert [line.split(": ")[1] for line in _stale(_pinned(), {"chromium_major": 156}, mode="deploy")] == ["warning"]


def test_a_pin_that_matches_the_browser_says_nothing():
    assert _stale(_pinned(ua=UA_99.replace("Chrome/99", "Chrome/156")), {"chromium_major": 156}) == []


def test_offline_with_no_platform_nothing_is_said():
    assert _stale(_pinned(), None) == []


def test_engine_chrome_compares_with_google_chrome_and_falls_back_to_chromium():
    both = {"chromium_major": 156, "chrome_major": 157}
    assert "is Google Chrome 157;" in _stale(_pinned("chrome"), both)[0]
    assert "is Chromium 156;" in _stale(_pinned("chrome"), {"chromium_major": 156})[0]


def test_another_engine_or_a_vendors_browser_is_not_compared():
    assert _stale(_pinned("firefox"), {"chromium_major": 156}) == []
    assert (
        _stale(_agent(f'  browse:\n    via: browserbase\n    user_agent: "{UA_99}"\n'), {"chromium_major": 156}) == []
    )


def test_an_identitys_pinned_user_agent_warns_naming_the_identity():
    identity = f'    identities:\n      old: {{user_agent: "{UA_99}"}}\n'
    files = _agent(f"  browse:\n    locale: en-AU\n{identity}")
    (line,) = _stale(files, {"chromium_major": 156})
    assert line.startswith(
        f"{AGENT}:8: warning: web.browse.identities.old.user_agent claims Chrome 99, but the browser "
        "that sends it is Chromium 156;"
    )
