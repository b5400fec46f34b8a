"""A provider's reply that carries no id (some OpenAI-compatible servers leave it out) still leaves the
translator with the keys every reply has — an id made up for it, not a crash."""

from foldrun.providers.supply import normalise_message


def test_a_reply_without_an_id_gets_a_message_id_of_its_own():
    message = normalise_message({"content": [{"type": "text", "text": "hi"}]})
    assert message["id"].startswith("msg_") and len(message["id"]) == 28
    assert message["usage"] == {"input_tokens": 0, "output_tokens": 0}


def test_a_reply_with_an_id_keeps_it():
    assert normalise_message({"id": "chatcmpl-1"})["id"] == "chatcmpl-1"
