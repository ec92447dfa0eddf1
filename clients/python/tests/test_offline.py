"""What the client decides on its own: configuration refusals, error mapping, answer parsing."""

import unittest

import _path  # noqa: F401  (puts src/ on the path)

from warden_client import (
    ApprovalError,
    AuthenticationError,
    ClientError,
    Decision,
    ExecuteResult,
    RateLimitedError,
    RequestInvalidError,
    RunError,
    UnavailableError,
    WardenClient,
    WardenError,
    error_for,
)


class ConfigurationTests(unittest.TestCase):
    def test_plain_http_to_a_remote_sidecar_is_refused_the_token_would_travel_in_clear(self) -> None:
        with self.assertRaises(ClientError) as cm:
            WardenClient("http://warden.example.com", "token-0123456789")
        self.assertEqual(cm.exception.code, "ERR_CLIENT_CONFIG_INVALID")

    def test_an_empty_or_spaced_token_is_refused(self) -> None:
        for token in ("", "two words", "x" * 513):
            with self.assertRaises(ClientError):
                WardenClient("http://127.0.0.1:1", token)

    def test_https_and_loopback_are_accepted(self) -> None:
        WardenClient("https://warden.example.com", "token-0123456789")
        WardenClient("http://127.0.0.1:8787/", "token-0123456789")


class ErrorMappingTests(unittest.TestCase):
    def test_codes_map_to_their_family(self) -> None:
        cases = {
            "ERR_AUTH_INVALID": AuthenticationError,
            "ERR_IDENTITY_SIGNATURE_INVALID": AuthenticationError,
            "ERR_RUN_UNKNOWN": RunError,
            "ERR_SERVER_RUN_NOT_FOUND": RunError,
            "ERR_APPROVAL_NOT_FOUND": ApprovalError,
            "ERR_SERVER_RATE_LIMITED": RateLimitedError,
            "ERR_SERVER_REQUEST_INVALID": RequestInvalidError,
            "ERR_JSON_DUPLICATE_KEY": RequestInvalidError,
        }
        for code, cls in cases.items():
            e = error_for(code, "m", 400)
            self.assertIsInstance(e, cls, code)
            self.assertEqual(e.code, code)

    def test_an_unknown_503_is_unavailable_and_an_unknown_code_stays_coded(self) -> None:
        self.assertIsInstance(error_for("ERR_SERVER_JOURNAL_UNAVAILABLE", "m", 503), UnavailableError)
        e = error_for("ERR_SOMETHING_NEW", "m", 418)
        self.assertIs(type(e), WardenError)
        self.assertEqual(e.code, "ERR_SOMETHING_NEW")


class ParsingTests(unittest.TestCase):
    def test_an_allowed_call_without_a_result_is_refused_fail_closed(self) -> None:
        with self.assertRaises(ClientError) as cm:
            ExecuteResult.parse({"decisionId": "d", "decision": "allow", "reasonCodes": [], "taint": []})
        self.assertEqual(cm.exception.code, "ERR_CLIENT_RESPONSE_INVALID")

    def test_an_unknown_decision_word_is_refused(self) -> None:
        with self.assertRaises(ClientError):
            Decision.parse({"decisionId": "d", "decision": "maybe", "reasonCodes": []})

    def test_a_step_up_that_ran_out_is_recognised(self) -> None:
        d = Decision.parse({"decisionId": "d", "decision": "deny", "reasonCodes": ["approval_timeout"]})
        self.assertFalse(d.allowed)
        self.assertTrue(d.step_up_ended)


if __name__ == "__main__":
    unittest.main()
