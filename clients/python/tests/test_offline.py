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


class ApproverKeyTests(unittest.TestCase):
    """Ed25519 (RFC 8032) and the approval statement, without a sidecar."""

    SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")

    def test_rfc_8032_test_vector_1_pure_python(self) -> None:
        from warden_client import ed25519

        self.assertEqual(
            ed25519.public_key_pure(self.SEED).hex(),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        )
        self.assertEqual(
            ed25519.sign_pure(self.SEED, b"").hex(),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        )

    def test_a_pkcs8_pem_and_a_jwk_give_the_same_key(self) -> None:
        import base64

        from warden_client import ApproverKey

        der = bytes.fromhex("302e020100300506032b657004220420") + self.SEED
        pem = b"-----BEGIN PRIVATE KEY-----\n" + base64.b64encode(der) + b"\n-----END PRIVATE KEY-----\n"
        d = base64.urlsafe_b64encode(self.SEED).rstrip(b"=").decode()
        jwk = '{"kty":"OKP","crv":"Ed25519","d":"%s","x":"ignored"}' % d
        keys = [ApproverKey.from_bytes(pem), ApproverKey.from_bytes(jwk), ApproverKey.from_bytes(self.SEED)]
        self.assertEqual({k.key_id for k in keys}, {keys[0].key_id})

    def test_a_public_key_or_garbage_is_refused_with_a_code(self) -> None:
        from warden_client import ERR_CLIENT_KEY_INVALID, ApproverKey

        for bad in (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", b"short", b'{"kty":"EC"}'):
            with self.assertRaises(ClientError) as cm:
                ApproverKey.from_bytes(bad)
            self.assertEqual(cm.exception.code, ERR_CLIENT_KEY_INVALID)

    def test_a_key_without_its_approver_id_is_refused(self) -> None:
        with self.assertRaises(ClientError) as cm:
            WardenClient("http://127.0.0.1:1", "token-0123456789", approver_key=self.SEED)
        self.assertEqual(cm.exception.code, "ERR_CLIENT_CONFIG_INVALID")

    def test_canonical_json_writes_numbers_and_strings_as_rfc_8785(self) -> None:
        from warden_client.canonical import canonical_json

        value = {"b": [1e21, 1e-7, 123456789.0, 0.1, -0.0, 5e-324], "a": "é\n\u001f", "\u00e9": 1, "z": 2}
        self.assertEqual(
            canonical_json(value),
            '{"a":"é\\n\\u001f","b":[1e+21,1e-7,123456789,0.1,0,5e-324],"z":2,"é":1}',
        )
