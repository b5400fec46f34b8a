"""Each bad session option is invalid_input with a sentence naming it, and the issue's path."""

from __future__ import annotations

import pytest

from browsing.errors import SessionError
from browsing.options import read_options


def refusal(body) -> SessionError:
    with pytest.raises(SessionError) as caught:
        read_options(body)
    assert caught.value.code == "invalid_input"
    return caught.value


def paths(error: SessionError) -> list[str]:
    return [issue["path"] for issue in error.details["issues"]]


def test_url_is_refused_pointing_at_start_url():
    error = refusal({"url": "https://example.com"})
    assert paths(error) == ["url"]
    assert error.message == ("Url is not an option of a session; use startUrl for the page the browser opens first.")


@pytest.mark.parametrize(
    "url, sentence",
    [
        ("ftp://example.com/file", "startUrl must be an http or https URL with a host; ftp was given"),
        ("https://", "startUrl must be an http or https URL with a host; https was given"),
        (42, "startUrl must be an http or https URL"),
        ("https://example.com/" + "a" * 2030, "startUrl is 2,050 characters long; at most 2,048 are allowed"),
    ],
)
def test_a_start_url_must_be_http_and_at_most_2048_characters(url, sentence):
    error = refusal({"startUrl": url})
    assert error.details["issues"] == [{"path": "startUrl", "message": sentence}]


def test_a_start_url_of_2048_characters_is_taken():
    url = "https://example.com/" + "a" * (2048 - len("https://example.com/"))
    assert read_options({"startUrl": url}).start_url == url


@pytest.mark.parametrize(
    "viewport, path, sentence",
    [
        (
            {"width": 199, "height": 600},
            "viewport.width",
            "viewport.width must be a whole number of pixels from 200 to 7680",
        ),
        (
            {"width": 800, "height": 4321},
            "viewport.height",
            "viewport.height must be a whole number of pixels from 200 to 4320",
        ),
        ({"width": 800}, "viewport.height", "viewport.height is required, from 200 to 4320 pixels"),
        (
            {"width": 800, "height": 600, "deviceScaleFactor": 9},
            "viewport.deviceScaleFactor",
            "viewport.deviceScaleFactor must be a number from 0.25 to 5",
        ),
        ({"width": 800, "height": 600, "mobile": "yes"}, "viewport.mobile", "viewport.mobile must be true or false"),
        (
            {"width": 800, "height": 600, "depth": 2},
            "viewport.depth",
            "viewport.depth is not a viewport field (width, height, deviceScaleFactor, mobile)",
        ),
    ],
)
def test_a_viewport_out_of_range_names_the_field(viewport, path, sentence):
    assert refusal({"viewport": viewport}).details["issues"] == [{"path": path, "message": sentence}]


def test_a_viewport_at_its_limits_is_taken():
    opts = read_options({"viewport": {"width": 7680, "height": 200, "deviceScaleFactor": 2, "mobile": True}})
    assert (
        opts.viewport["width"],
        opts.viewport["height"],
        opts.viewport["deviceScaleFactor"],
        opts.viewport["mobile"],
    ) == (7680, 200, 2, True)


def test_a_device_is_desktop_mobile_or_one_of_the_device_list():
    assert read_options({"device": "Pixel 7"}).viewport["mobile"] is True
    assert read_options({"device": "desktop"}).viewport["width"] == 1280
    error = refusal({"device": "toaster"})
    assert error.details["issues"][0]["path"] == "device"
    assert "desktop, mobile or a device id from the device list" in error.message


def test_more_than_20_headers_are_refused():
    headers = [{"host": "staging.example.com", "name": f"X-H{n}", "value": "v"} for n in range(21)]
    assert refusal({"headers": headers}).details["issues"] == [
        {"path": "headers", "message": "headers has 21 entries; at most 20 are allowed"}
    ]


def test_a_header_names_its_host_and_its_value_is_never_in_the_sentence():
    error = refusal(
        {
            "headers": [
                {"host": "not a host", "name": "X-Gate", "value": "s3cret-gate-value"},
                {"host": "ok.example.com", "name": "Host", "value": "x"},
            ]
        }
    )
    assert paths(error) == ["headers[0].host", "headers[1].name"]
    assert "s3cret-gate-value" not in repr(error.details) + error.message
    assert error.details["issues"][1]["message"] == "headers[1].name: the browser sets Host itself"


def test_the_options_shown_keep_header_names_but_not_their_values():
    opts = read_options({"headers": [{"host": "*.example.com", "name": "X-Gate", "value": "s3cret-gate-value"}]})
    assert opts.public()["headers"] == [{"host": "*.example.com", "name": "X-Gate"}]
    assert opts.headers[0]["value"] == "s3cret-gate-value"


def test_credentials_are_true_or_a_namespace_and_never_a_password():
    assert read_options({"credentials": True}).credentials == {"namespace": "default", "autoSubmit": True}
    assert read_options({"credentials": {"namespace": "staging", "autoSubmit": False}}).credentials == {
        "namespace": "staging",
        "autoSubmit": False,
    }
    error = refusal({"credentials": {"password": "hunter22"}})
    assert paths(error) == ["credentials"]
    assert "there is no field for a password" in error.message and "hunter22" not in error.message


def test_allow_hosts_needs_a_proxy_url():
    assert refusal({"allowHosts": ["app.internal"]}).details["issues"] == [
        {
            "path": "allowHosts",
            "message": "allowHosts needs proxyUrl: the hosts it names are reached through your proxy",
        }
    ]
    opts = read_options({"proxyUrl": "http://user:pw@proxy.example.com:3128", "allowHosts": ["app.internal"]})
    assert opts.allow_hosts == ["app.internal"]
    assert opts.public()["proxyUrl"] == "http://user:***@proxy.example.com:3128"


@pytest.mark.parametrize("key", ["idleTimeoutMs", "maxDurationMs"])
@pytest.mark.parametrize("value", [9_999, 86_400_001, "60000", True])
def test_timeouts_are_from_ten_seconds_to_a_day(key, value):
    error = refusal({key: value})
    assert paths(error) == [key]
    assert "from 10,000 to 86,400,000" in error.message


def test_timeouts_default_to_five_minutes_and_an_hour():
    opts = read_options({})
    assert (opts.idle_timeout_ms, opts.max_duration_ms) == (300_000, 3_600_000)


def test_engine_version_needs_engine_id():
    assert refusal({"engineVersion": 1}).details["issues"] == [
        {"path": "engineVersion", "message": "engineVersion needs engineId"}
    ]
    assert paths(refusal({"engineId": "netscape"})) == ["engineId"]
    assert read_options({"engineId": "chromium", "engineVersion": 1}).engine_version == 1


def test_wait_for_capacity_is_up_to_30_seconds_and_not_together_with_the_queue():
    assert paths(refusal({"waitForCapacityMs": 30_001})) == ["waitForCapacityMs"]
    error = refusal({"waitForCapacityMs": 1000, "queueForCapacity": {"maxWaitSeconds": 10}})
    assert error.details["issues"] == [
        {
            "path": "queueForCapacity",
            "message": ("queueForCapacity and waitForCapacityMs above 0 cannot be used together; send one of them"),
        }
    ]
    assert read_options({"waitForCapacityMs": 0, "queueForCapacity": {"maxWaitSeconds": 10}}).queue_seconds == 10


@pytest.mark.parametrize("seconds", [0, 901])
def test_the_queue_waits_from_1_to_900_seconds(seconds):
    error = refusal({"queueForCapacity": {"maxWaitSeconds": seconds}})
    assert error.details["issues"] == [
        {
            "path": "queueForCapacity.maxWaitSeconds",
            "message": (f"queueForCapacity.maxWaitSeconds must be from 1 to 900; it is {seconds}"),
        }
    ]


def test_every_issue_is_listed_at_once_and_the_message_counts_the_rest():
    error = refusal({"startUrl": "mailto:x@example.com", "idleTimeoutMs": 5, "colour": "red"})
    assert paths(error) == ["colour", "startUrl", "idleTimeoutMs"]
    assert error.message == "Colour is not an option of a session (and 2 more)."


def test_a_body_that_is_not_an_object_is_refused():
    assert refusal(["startUrl"]).message == "The session options must be a JSON object."


HEADER_NAMES_THE_BROWSER_SETS = [
    "Host",
    "te",
    "TE",
    "Content-Length",
    "Expect",
    "Connection",
    "Keep-Alive",
    "Proxy-Connection",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
    "Proxy-Authorization",
    "proxy-anything",
]


@pytest.mark.parametrize("name", HEADER_NAMES_THE_BROWSER_SETS)
def test_a_header_the_browser_sets_itself_or_a_hop_by_hop_one_is_refused(name):
    error = refusal({"headers": [{"host": "staging.example.com", "name": name, "value": "x"}]})
    assert error.details["issues"] == [
        {"path": "headers[0].name", "message": f"headers[0].name: the browser sets {name} itself"}
    ]


def test_a_header_name_with_a_trailing_newline_is_not_a_header_name():
    error = refusal({"headers": [{"host": "staging.example.com", "name": "X-Gate\n", "value": "x"}]})
    assert error.details["issues"][0]["message"] == "headers[0].name must be a header name, such as X-Staging-Gate"


def test_the_schema_s_header_name_pattern_refuses_exactly_what_the_options_refuse():
    import re

    from browsing.serializers import HEADER_NAME_PATTERN, HeaderSerializer

    allowed = ["X-Staging-Gate", "Authorization", "Cookie", "X-Te", "Tex", "Hosts", "My-Proxy-Token", "a"]
    for name in allowed:
        assert re.search(HEADER_NAME_PATTERN, name), name
        assert read_options({"headers": [{"host": "staging.example.com", "name": name, "value": "v"}]}).headers
    for name in HEADER_NAMES_THE_BROWSER_SETS:
        assert not re.search(HEADER_NAME_PATTERN, name), name
        serializer = HeaderSerializer(data={"host": "staging.example.com", "name": name, "value": "v"})
        assert not serializer.is_valid()
        assert serializer.errors["name"] == [
            "is a name the browser sets itself (Host, Content-Length, a hop-by-hop "
            "or Proxy- header) or not a header name."
        ]
